package loaders

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"time"
)

// MemFileInfo is the stat of a regular file named name that holds data in
// memory (a file an FS lays over a tree without writing it). Its Sys names
// its content (a ContentID method, as a git tree's files have): two such
// files with the same data share the name, so that the cache keys them by
// their bytes, never by a stat of whatever lies on disk at their path.
func MemFileInfo(name string, data []byte) fs.FileInfo {
	d := sha256.Sum256(data)
	return memInfo{name: name, size: int64(len(data)), id: memContent("kpipe-mem-sha256:" + hex.EncodeToString(d[:]))}
}

type memInfo struct {
	name string
	size int64
	id   memContent
}

func (m memInfo) Name() string       { return m.name }
func (m memInfo) Size() int64        { return m.size }
func (m memInfo) Mode() fs.FileMode  { return 0o644 }
func (m memInfo) ModTime() time.Time { return time.Time{} }
func (m memInfo) IsDir() bool        { return false }
func (m memInfo) Sys() any           { return m.id }

// memContent names a MemFileInfo's content (cache.ContentID reads it).
type memContent string

func (c memContent) ContentID() string { return string(c) }
