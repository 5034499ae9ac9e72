package cache

import (
	"errors"
	"time"
)

// KV is a key-value store that a Store keeps its objects in instead of a
// file per object (Options.KV): for one process that owns the store for
// a long life. Package cache/badger is one (a Badger v4 database); package
// cache itself imports none, so that a process that never asks for one
// (the CLI) does not link it (see doc.go).
//
// Names and values are bytes the Store chose and verifies when it reads
// them back: a KV only keeps bytes under names. A KV is safe for
// concurrent use.
type KV interface {
	// Get returns the value stored under name; found is false (and err
	// nil) when there is none. An error is damage the store found, or the
	// store failing: the Store takes it as a miss and warns once.
	Get(name []byte) (value []byte, found bool, err error)
	// Stat returns the length of the value under name without reading it.
	Stat(name []byte) (size int64, found bool, err error)
	// PutAsync stores value under name, replacing a value of that name,
	// and returns at once; then is called (from any goroutine) once the
	// value is committed (nil) or failed. The KV keeps value until then;
	// the Store does not change it. A value bigger than the store's whole
	// bound is refused with ErrKVTooBig (not kept; not a failure); any
	// other error makes the Store stop writing, with one warning.
	PutAsync(name, value []byte, then func(error))
	// Delete removes the value under name, when there is one.
	Delete(name []byte) error
	// Barrier returns once every PutAsync and Delete called before it is
	// committed and its callback has run.
	Barrier()
	// Each calls f with every name that starts with prefix, until f
	// returns false.
	Each(prefix []byte, f func(name []byte) bool) error
	// DiskSize is what the store takes on disk, as du counts it.
	DiskSize() int64
	// Close commits what waits and releases the store; calls after it
	// fail with ErrKVClosed.
	Close() error
	// String names the store in messages ("Badger").
	String() string
}

// KVOptions is what Open tells Options.KV.
type KVOptions struct {
	// Dir is the cache directory (Options.Dir), already created and
	// marked as a cache: the KV keeps its files in a directory of its own
	// under it.
	Dir string
	// MaxSize bounds the bytes the store holds (Options.MaxSize, never
	// zero): past it, the least recently used values go.
	MaxSize int64
	// Log receives the store's errors, one line each.
	Log func(msg string)
	// Now is the clock.
	Now func() time.Time
}

var (
	// ErrKVClosed is a KV's error for a call after Close.
	ErrKVClosed = errors.New("the store is closed")
	// ErrKVTooBig is a KV's error for a value bigger than the store's
	// whole bound: it is not kept, and that is no failure.
	ErrKVTooBig = errors.New("the object is bigger than the store's size bound")
)
