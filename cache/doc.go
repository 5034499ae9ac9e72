// Package cache is kpipe's on-disk, content-addressed cache: memoized
// nodes, stages and root outputs (Store), the stat index that finds file
// digests without reading files (FileIndex), the check of recorded inputs
// against the tree (InputChecker), and records that callers name and
// check themselves (Store.Record: build-all's records of roots are kept
// there by internal/rootindex).
//
// It imports nothing of kpipe but its subpackage remote and the internal
// package fsread, and no Badger (see "Badger outside the CLI's binary"
// below); the engine, internal/rootindex, package batch, the CLI, the
// public kpipe package, the Badger backend (cache/badger) and the cache
// server (cache/server) use it.
//
// Stability: kpipe's stable API is the packages kpipe and pluginapi. This
// package is an importable building block with no compatibility promise
// before v1: its names may change in any release.
//
// # Two backends: files for many short processes, Badger for one owner
//
// A Store keeps its objects (entry lines, content, stat and root
// records; each self-checking, each verified by the Store when read)
// through one seam, the objects interface (objects.go), with two
// backends: the file store, or a key-value store when Options.KV is set
// (the KV interface, kv.go; package cache/badger's OpenKV is Badger's).
// One suite of store tests (runStoreTests in suite_test.go) runs against
// files, packed files and Badger.
//
//   - The file store (no Options.KV), the CLI's: a file per entry, in
//     the shape below. Every `kpipe build` opens the cache, thousands of
//     times a day, often many processes at once: Open reads nothing,
//     there is no lock, and each process pays only for what it reads and
//     writes.
//   - Options.KV = badger.OpenKV: a Badger v4 database under
//     <dir>/badger (package cache/badger), for a process that owns the
//     store for a long life: the cache server (package server, command
//     kpipe-cache-server) and an embedder that opens its cache with
//     kpipe.BadgerStore. No file or inode per
//     entry; writes are batched; the size bound is kept as it writes, by
//     evicting the least recently used entries (access times are kept in
//     the database, so a start loads nothing whatever the store holds).
//     It is one process's: Badger locks the directory, and a second
//     process that opens it warns and builds without a cache.
//
// The properties that made Badger wrong for the CLI (see "Why not
// BadgerDB for the CLI" below) are those of a store meant for one
// long-lived owner; cache/badger opens it defensively for that
// owner: it checks MANIFEST and every table's index before Badger opens
// them (Badger panics in goroutines of its own on a cut-short table,
// where recover cannot reach), verifies blocks and values on every read,
// refuses writes while the disk is nearly full (a write through Badger's
// memory-mapped logs to a full disk is a SIGBUS), and sizes its memtables
// and caches for a cache (16 MiB memtables, a 32-64 MiB block cache),
// and keeps values over 64 KiB as files of their own beside it, so that
// the disk follows the size bound (Badger's value log frees its files
// only long after).
//
// # Badger outside the CLI's binary
//
// This package does not import Badger: the KV seam lets the process that
// wants it bring it (cache/badger), and the kpipe command does not (its
// test TestKpipeDoesNotLinkBadger fails if anything links it again).
// Linking Badger is not free for a process that never opens it: the
// package initialisation of Badger and its dependencies (protobuf,
// ristretto, the OpenTelemetry API, klauspost/compress, ...) cost every
// kpipe process about 6.5 ms of CPU (`kpipe version`) and 5 ms of a warm
// `kpipe build` of 35-40 ms, and 7 MB of binary (17.6 -> 24.9 MB),
// measured with the binaries alternating (benchmarks/RESULTS.md, "Badger
// out of the kpipe binary"). So the cache server is a binary of its own,
// kpipe-cache-server, which `kpipe cache serve` hands over to.
//
// # Shape of the file store
//
// The file store has the Go build cache's shape (cmd/go/internal/cache),
// because it is opened by every CLI run, often by many processes at once:
//
//   - a file per entry, under <dir>/v2/<first hex digit of the key>/ (layout.go):
//     "-a" files hold one fixed-size line (format, key, content digest,
//     size, time, flags) and, for values up to 16 KiB, the value after it;
//     "-d" files hold larger content, named by its SHA-256; "-i" files are
//     stat-index records (of a path on disk, or of a content's name in a
//     tree that names content, a git revision: files.go), "-r" files callers'
//     records (records.go: internal/rootindex's root and discovery
//     records and the input sets that root records share, a base's
//     inputs stored once under the set's own digest);
//   - with Options.Pack (the CLI's choice), the files a run writes are
//     gathered and written a few hundred at a time as one pack file linked
//     under each file's name (pack.go): a hard link costs about 3 us where
//     a new file costs 150-250 us on a CI machine's ext4, and those
//     creations were what filling the cache cost. A reader that opens a
//     name and finds a pack looks its member up in the pack's sorted
//     index (at most 512 records, so a lookup costs the same whatever the
//     cache holds); the member's bytes are checked as a file's would be;
//   - Open reads nothing but the marker file, so it costs the same after one
//     run or ten thousand; a lookup opens one or two files, and in a
//     directory the process made a cache none for a name it has not
//     written (a cold run's lookups all miss; layout.go, fresh);
//   - every file is self-checking (an entry line names its key and its
//     content's digest, a record ends in its digest), data is written
//     before the entry that points at it, and a pack is written whole
//     before any name links to it, so a reader sees a complete entry or a
//     miss, and a process killed mid-write leaves a miss or a temporary
//     file; a name that exists is replaced by a rename, never rewritten
//     in place (it may be a name of a pack);
//   - any defect (missing, truncated, not the key asked for, a digest that
//     does not match the content) is a miss: the caller builds again;
//   - no directory lock: any number of processes read and write at once.
//     Names derive from content, so racing writers write the same bytes; at
//     worst two processes do the same work;
//   - the directory is created 0700 and files 0600.
//
// # Size
//
// Reads refresh an entry's modification time at most once an hour. Close
// adds what the run wrote to an estimate in trim.txt and, past the size
// bound (Options.MaxSize, `--cache-max-size`, counted as du counts blocks),
// deletes the least recently used files down to three quarters of it; the
// estimate is measured again at most daily. `kpipe cache prune` and `cache
// stats` scan the directory and report what they measured.
//
// # Never destructive, never fatal
//
// kpipe deletes only names it creates (the suffixes above and its own
// temporary files) in a directory that carries its marker, CACHEDIR.TAG
// (which also tells backup tools to skip it). A directory that holds
// anything else and no marker is refused with one warning, and the build
// goes on without a cache; so does a directory that cannot be created,
// read or written (a read-only or full disk: the first failed write
// warns once and the run writes nothing more). A directory of the first
// format (BadgerDB files) is recognised by its file names and emptied of
// them. `kpipe cache clear` works on any damaged cache. No message ever
// includes a cached value's bytes.
//
// # Sensitive entries
//
// The cache holds rendered resources: a secretGenerator's literals, a
// Secret's data, and the output of plugins and KRM functions (which may
// decrypt secrets: the KSOPS pattern) among them. Such entries carry the
// sensitive flag (Store.PutSensitive); Store.uploadable leaves them out of
// what a remote cache would be sent unless the caller asks for them, and
// the remote layer never uploads them unless RemoteOptions.Sensitive. On
// disk they are protected only by the directory's permissions.
//
// # Remote
//
// Store.SetRemote puts a shared cache behind the directory (remote.go,
// backends in package remote/backend): a lookup that misses here asks the remote
// for the action record under the same key (the entry file's bytes: its
// line and an inline value) and, for a larger value, the content under
// its SHA-256; both are verified as a local entry is, a defect being a
// refused object (one warning each, at most five) and a miss, and what
// passes is written here. Uploads (RemoteOptions.Write) go in the
// background, content before record; Flush and Close wait for them. The
// remote's first failure is one warning, and the store goes on without it.
//
// # Why not BadgerDB for the CLI
//
// The first version kept everything in BadgerDB. For a CLI that is started
// once per root, thousands of times, Badger's design works against the user:
// it holds an exclusive directory lock (one kpipe at a time; others waited,
// then built without a cache); every run left table and value-log files
// that the next open mapped one by one (a tiny root went from 26 ms to
// 182 ms after 600 runs); its memory-mapped value log turns a full disk into
// SIGBUS; a damaged table panics in Badger's own goroutines, beyond recover.
// Each is a property of an embedded store meant for one long-lived process,
// so the file-per-entry layout replaced it for the CLI rather than sitting
// in front of it. Badger came back as the second backend, for the one
// long-lived process it was made for (above).
package cache
