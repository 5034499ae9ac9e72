package cli

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/fetch"
)

// newFetcher returns the fetcher of remote bases and files the flags ask
// for: it keeps what it fetches in <cache dir>/remote, or, without a cache
// (store nil: --no-cache, or a cache directory that cannot be found or
// used, openCache warned), in a directory of its own under the system's
// temporary directory, created only when something is fetched and removed
// by the returned function, which otherwise trims what it keeps
// (fetch.Trim). A fetch starts listening for stop signals first
// (armStop): it may start git or helm, and make temporary files.
func newFetcher(c *cli.Context, store *cache.Store) (*fetch.Fetcher, func()) {
	arm := func() { armStop(c.Context) }
	if store == nil {
		var b [8]byte
		_, _ = rand.Read(b[:])
		dir := filepath.Join(os.TempDir(), "kpipe-remote-"+hex.EncodeToString(b[:]))
		f := fetch.New(fetch.Options{Dir: dir, Offline: c.Bool("offline"), Net: extensions(c).Net, BeforeFetch: arm})
		return f, func() { _ = os.RemoveAll(dir) }
	}
	f := fetch.New(fetch.Options{Dir: filepath.Join(store.Dir(), "remote"), Offline: c.Bool("offline"), Net: extensions(c).Net, BeforeFetch: arm})
	return f, f.Trim // at most daily: what no run used for five days
}
