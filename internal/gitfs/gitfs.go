// Package gitfs reads revisions of a git repository from git's objects,
// without a checkout: a revision's tree is an fs.FS (FS), whose
// directories and files are read when asked for, through one long-lived
// `git cat-file --batch` per repository (Repo), and two trees are compared
// by their object names, descending only into the directories that differ
// (Repo.Diff), as git diff-tree does. A run that renders what one commit
// changed reads the few trees and files that lead to it, whatever the size
// of the repository.
//
// git itself reads the objects, so that every repository git can read
// works: packed or loose objects, SHA-1 or SHA-256 names, alternates,
// worktrees, and partial clones, whose missing objects git fetches.
//
// It imports only the internal package fsread (for its cap on the size
// of one file).
package gitfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/kpipe/kpipe/internal/fsread"
)

// Repo is a git repository whose objects are read through one `git
// cat-file --batch` process, started by Open and ended by Close. It is
// safe for concurrent use; requests are answered one at a time.
type Repo struct {
	dir string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	w      *bufio.Writer
	r      *bufio.Reader
	stderr stderrBuffer
	err    error // set once the process failed: every later request fails
	closed bool
	reads  int // objects read (for tests and reports)

	// blobs are the files read, by object name: a file the two sides of
	// a review share, or that two goroutines ask for at once, is read
	// once; its content is kept while kept stays under maxKept.
	bmu   sync.Mutex
	blobs map[string]*blobSlot
	kept  int64
}

// blobSlot is one file read (once).
type blobSlot struct {
	once sync.Once
	o    object
	err  error
	kept bool // o.data is kept for the next to ask
}

// maxKept bounds the content of files kept for a second reader.
const maxKept = 256 << 20

// Open starts reading the objects of the repository at dir (any directory
// of its working tree, or its git directory). ctx bounds the process.
func Open(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{dir: dir}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stderr = &r.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	r.cmd, r.stdin = cmd, stdin
	r.w = bufio.NewWriter(stdin)
	r.r = bufio.NewReaderSize(stdout, 64<<10)
	return r, nil
}

// stderrBuffer keeps the first few KiB of the process's stderr, written
// by the goroutine exec copies it with.
type stderrBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *stderrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := 4096 - b.buf.Len(); n > 0 {
		b.buf.Write(p[:min(n, len(p))])
	}
	return len(p), nil
}

func (b *stderrBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Close ends the process.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		return r.fail(err)
	}
	return nil
}

// Reads returns how many objects were read so far.
func (r *Repo) Reads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// fail is the error of a failed process (under r.mu).
func (r *Repo) fail(err error) error {
	msg := strings.TrimSpace(r.stderr.String())
	if msg != "" {
		return fmt.Errorf("git cat-file in %s: %v: %s", r.dir, err, msg)
	}
	return fmt.Errorf("git cat-file in %s: %w", r.dir, err)
}

// errMissing says git has no object of that name.
var errMissing = errors.New("no such object")

// object is one answer of cat-file: the object's name, type and content
// (nil for an object larger than the limit it was read with, whose size
// is then still given).
type object struct {
	oid, typ string
	size     int64
	data     []byte
}

// read asks git for the object name (an object name, or any expression
// git rev-parse takes: HEAD~1^{commit}); content larger than limit is
// read and dropped, not kept.
func (r *Repo) read(name string, limit int64) (object, error) {
	if strings.ContainsAny(name, "\n\x00") {
		return object{}, fmt.Errorf("%q: not an object name", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return object{}, r.err
	}
	if r.closed {
		return object{}, errors.New("git cat-file: repository closed")
	}
	o, err := r.request(name, limit)
	if err != nil && !errors.Is(err, errMissing) {
		// The process is of no more use: end it, and wait for what it
		// said on stderr.
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.closed = true
		r.err = r.fail(err)
		return object{}, r.err
	}
	r.reads++
	return o, err
}

// request writes one request and reads its answer (under r.mu).
func (r *Repo) request(name string, limit int64) (object, error) {
	r.w.WriteString(name)
	r.w.WriteByte('\n')
	if err := r.w.Flush(); err != nil {
		return object{}, err
	}
	header, err := r.r.ReadString('\n')
	if err != nil {
		return object{}, err
	}
	f := strings.Fields(header)
	switch {
	case len(f) == 2 && (f[1] == "missing" || f[1] == "ambiguous"):
		return object{}, fmt.Errorf("%s: %w (%s)", name, errMissing, f[1])
	case len(f) != 3:
		return object{}, fmt.Errorf("unexpected answer %q for %s", strings.TrimSpace(header), name)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return object{}, fmt.Errorf("bad size in %q", strings.TrimSpace(header))
	}
	o := object{oid: f[0], typ: f[1], size: size}
	if size > limit {
		if _, err := r.r.Discard(int(size)); err != nil {
			return object{}, err
		}
	} else {
		o.data = make([]byte, size)
		if _, err := io.ReadFull(r.r, o.data); err != nil {
			return object{}, err
		}
	}
	if _, err := r.r.Discard(1); err != nil { // the newline after the content
		return object{}, err
	}
	return o, nil
}

// Commit returns the commit rev names and its root tree.
func (r *Repo) Commit(rev string) (commit, tree string, err error) {
	o, err := r.read(rev+"^{commit}", 1<<20)
	if errors.Is(err, errMissing) || err == nil && (o.typ != "commit" || o.data == nil) {
		return "", "", fmt.Errorf("%s is not a commit of the repository at %s", rev, r.dir)
	}
	if err != nil {
		return "", "", err
	}
	line, _, _ := bytes.Cut(o.data, []byte("\n"))
	t, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok {
		return "", "", fmt.Errorf("commit %s: no tree in its header", o.oid)
	}
	return o.oid, string(t), nil
}

// maxTree bounds the size of one tree object read (a directory of
// 100,000 entries is about 5 MiB).
const maxTree = 64 << 20

// tree reads the tree object oid.
func (r *Repo) tree(oid string) ([]entry, error) {
	o, err := r.read(oid, maxTree)
	if err != nil {
		return nil, err
	}
	if o.typ != "tree" {
		return nil, fmt.Errorf("object %s is a %s, not a tree", oid, o.typ)
	}
	if o.data == nil {
		return nil, fmt.Errorf("tree %s is larger than %d MiB", oid, maxTree>>20)
	}
	return parseTree(o.data, len(o.oid)/2)
}

// size returns the size of the object oid: from a blob read already, else
// by reading it (and dropping its content).
func (r *Repo) size(oid string) (int64, error) {
	r.bmu.Lock()
	s := r.blobs[oid]
	r.bmu.Unlock()
	if s != nil {
		s.once.Do(func() {}) // (wait for a read under way)
		if s.err == nil && s.kept {
			return s.o.size, nil
		}
	}
	o, err := r.read(oid, 0)
	return o.size, err
}

// blob reads the blob oid, up to fsread.MaxFileSize (larger: no data).
// The data is the caller's.
func (r *Repo) blob(oid string) (object, error) {
	r.bmu.Lock()
	if r.blobs == nil {
		r.blobs = map[string]*blobSlot{}
	}
	s := r.blobs[oid]
	if s == nil {
		s = &blobSlot{}
		r.blobs[oid] = s
	}
	r.bmu.Unlock()
	first := false
	s.once.Do(func() {
		first = true
		s.o, s.err = r.read(oid, fsread.MaxFileSize)
		if s.err == nil && s.o.typ != "blob" {
			s.err = fmt.Errorf("object %s is a %s, not a blob", oid, s.o.typ)
		}
		r.bmu.Lock()
		if s.kept = r.kept+int64(len(s.o.data)) <= maxKept; s.kept {
			r.kept += int64(len(s.o.data))
		}
		r.bmu.Unlock()
	})
	switch {
	case s.err != nil:
		return object{}, s.err
	case first && !s.kept:
		o := s.o
		s.o.data = nil
		return o, nil
	case !s.kept:
		return r.read(oid, fsread.MaxFileSize)
	}
	o := s.o
	o.data = bytes.Clone(o.data)
	return o, nil
}
