package cache

// Names for the store suite (suite_test.go), which is in package
// cache_test so that it can run against the key-value backend of package
// cache/badger too (which imports cache).

const (
	InlineMax  = inlineMax
	EntrySize  = entrySize
	PersistMin = persistMin
	SufAction  = sufAction
	SufData    = sufData
)

var FormatEntry = formatEntry

// EntrySensitive parses an entry line and says whether it is flagged
// sensitive.
func EntrySensitive(key Key, line []byte) (sensitive, ok bool) {
	e, ok := parseEntry(key, line)
	return e.sensitive, ok
}

func (s *Store) ObjectName(hex, suf string) string      { return s.name(hex, suf) }
func (s *Store) ReadObject(name string) ([]byte, error) { return s.read(name) }
func (s *Store) WriteObject(name string, data []byte)   { s.write(name, data) }
func (s *Store) RemoveObject(name string)               { s.remove(name) }
func (s *Store) Options() Options                       { return s.opts }

// Packed says whether s is a file store that writes packs.
func (s *Store) Packed() bool { return s.files != nil && s.files.pack != nil }

// TrustAtOnce makes the index trust a file's stat at once (no racy
// window).
func (ix *FileIndex) TrustAtOnce() { ix.window = 0 }
