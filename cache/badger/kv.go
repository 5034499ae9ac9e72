package badger

import (
	"path/filepath"

	"github.com/kpipe/kpipe/cache"
)

// Subdir is the database's directory under a cache directory opened
// with OpenKV.
const Subdir = "badger"

// OpenKV opens (creating it when missing) the Badger database under
// o.Dir/badger as a cache's key-value store: pass it as
// cache.Options.KV. A directory that is damaged or held by another
// process is an error naming it; cache.Open then warns once and goes on
// without a cache.
func OpenKV(o cache.KVOptions) (cache.KV, error) {
	db, err := Open(Options{Dir: filepath.Join(o.Dir, Subdir), MaxSize: o.MaxSize, Log: o.Log, Now: o.Now})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// String names the store in messages.
func (db *DB) String() string { return "Badger" }
