package cache

// Records are small objects that a caller names (a hex digest it derives
// from what the record is about) and checks itself, beside the store's
// entries: package rootindex keeps build-all's records of roots there. A
// record is replaced in place, unlike an entry, which never changes once
// written. A nil *Store keeps none.

// Record returns the record named name (hex digits); false when there is
// none, or it cannot be read.
func (s *Store) Record(name string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	b, err := s.objects.read(s.objects.name(name, sufRecord))
	return b, err == nil
}

// WriteRecord writes the record named name. A failure is reported once by
// the store, as its writes are.
func (s *Store) WriteRecord(name string, data []byte) {
	if s != nil {
		s.objects.write(s.objects.name(name, sufRecord), data)
	}
}

// RemoveRecord deletes the record named name.
func (s *Store) RemoveRecord(name string) {
	if s != nil {
		s.objects.remove(s.objects.name(name, sufRecord))
	}
}

// MayHaveRecord reports whether a record the caller knows by id (any
// string; NoteRecord) may be in the store: in a cache directory this
// process made, only the records it wrote are there, and a caller that
// notes them can skip deriving the names of the others (most of what a
// cold run's lookups of records cost). Always true otherwise.
func (s *Store) MayHaveRecord(id string) bool {
	if s == nil {
		return false
	}
	saved := s.objects.freshRecords()
	if saved == nil {
		return true
	}
	_, ok := saved.Load(id)
	return ok
}

// NoteRecord tells MayHaveRecord that the record known by id is written.
func (s *Store) NoteRecord(id string) {
	if s == nil {
		return
	}
	if saved := s.objects.freshRecords(); saved != nil {
		saved.Store(id, true)
	}
}
