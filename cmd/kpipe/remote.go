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
// returned function.
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
	return remote.New(remote.Options{Dir: dir, Offline: c.Bool("offline")}), done, nil
}
