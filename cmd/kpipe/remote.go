package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/remote"
)

// newFetcher returns the fetcher of remote bases and files the flags ask
// for: it keeps what it fetches in <cache dir>/remote, or, with
// --no-cache, in a directory of its own under the system's temporary
// directory, created only when something is fetched and removed by the
// returned function, which otherwise trims what it keeps (remote.Trim).
func newFetcher(c *cli.Context) (*remote.Fetcher, func(), error) {
	dir, err := cacheDir(c)
	if err != nil {
		return nil, nil, err
	}
	done := func() {}
	if dir == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		dir = filepath.Join(os.TempDir(), "kpipe-remote-"+hex.EncodeToString(b[:]))
		done = func() { _ = os.RemoveAll(dir) }
	} else {
		dir = filepath.Join(dir, "remote")
	}
	f := remote.New(remote.Options{Dir: dir, Offline: c.Bool("offline")})
	if !c.Bool("no-cache") {
		done = f.Trim // at most daily: what no run used for five days
	}
	return f, done, nil
}
