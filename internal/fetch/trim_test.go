package fetch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Trim deletes what was not used for five days, only names a Fetcher
// creates, at most once a day; use refreshes an entry.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	f := New(Options{Dir: dir})
	f.clock = func() time.Time { return now }
	repo := filepath.Join(dir, "git", strings.Repeat("a", 32))
	oldCommit, newCommit := strings.Repeat("1", 40), strings.Repeat("2", 40)
	chart := filepath.Join(dir, "charts", strings.Repeat("b", 32))
	file := filepath.Join(dir, "http", strings.Repeat("c", 32))
	foreign := filepath.Join(dir, "git", "notes.txt")
	for _, d := range []string{filepath.Join(repo, oldCommit), filepath.Join(repo, newCommit+"-nosubmodules"), filepath.Join(repo, ".tmp-123"),
		filepath.Join(repo, "refs"), filepath.Join(chart, "chart"), filepath.Dir(file)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{file, foreign, filepath.Join(repo, "refs", strings.Repeat("d", 32))} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	age := func(p string, d time.Duration) {
		if err := os.Chtimes(p, now.Add(-d), now.Add(-d)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(repo, oldCommit), filepath.Join(repo, ".tmp-123"), filepath.Join(chart, "chart"), file, foreign} {
		age(p, 6*24*time.Hour)
	}
	age(filepath.Join(repo, newCommit+"-nosubmodules"), 4*24*time.Hour)
	// Used now: refreshed, so kept.
	f.markUsed(filepath.Join(chart, "chart"))

	f.Trim()
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for p, want := range map[string]bool{
		filepath.Join(repo, oldCommit):  false,
		filepath.Join(repo, ".tmp-123"): false,
		file:                            false,
		filepath.Join(repo, newCommit+"-nosubmodules"): true,
		filepath.Join(chart, "chart"):                  true,
		foreign:                                        true, // not a name kpipe makes
		filepath.Join(repo, "refs"):                    true,
	} {
		if exists(p) != want {
			t.Errorf("%s: exists %v, want %v", p, exists(p), want)
		}
	}
	// Within a day, a second trim does nothing.
	now = now.Add(12 * time.Hour)
	age(filepath.Join(repo, newCommit+"-nosubmodules"), 6*24*time.Hour)
	f.Trim()
	if !exists(filepath.Join(repo, newCommit+"-nosubmodules")) {
		t.Error("a second trim within a day ran")
	}
	now = now.Add(13 * time.Hour)
	f.Trim()
	if exists(filepath.Join(repo, newCommit+"-nosubmodules")) {
		t.Error("an entry unused for six days survived the next day's trim")
	}
}
