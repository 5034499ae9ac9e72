package fetch

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of what a Fetcher keeps, the Go build cache's: an entry used
// within TrimAge is kept; its time of use is refreshed at most once per
// useInterval; a trim runs at most once per trimInterval.
const (
	TrimAge      = 5 * 24 * time.Hour
	useInterval  = time.Hour
	trimInterval = 24 * time.Hour
	trimFile     = "trim.txt"
)

// markUsed records that the kept entry at p (a checkout or chart
// directory, or a file) was used now, by its modification time, unless
// that was done within the last hour.
func (f *Fetcher) markUsed(p string) {
	now := f.now()
	if st, err := os.Stat(p); err == nil && now.Sub(st.ModTime()) > useInterval {
		_ = os.Chtimes(p, now, now)
	}
}

func (f *Fetcher) now() time.Time {
	if f.clock != nil {
		return f.clock()
	}
	return time.Now()
}

// Names the Fetcher creates, the only ones Trim deletes.
var (
	hashNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })
	checkoutPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})(-nosubmodules)?$`) })
)

// Trim deletes the checkouts, charts and files not used within TrimAge,
// and what killed runs left half-written; it does so at most once a day
// (Options.Dir/trim.txt records the last time), and only for names a
// Fetcher creates. A ref whose commit was trimmed stays recorded: offline,
// it then fails naming its URL. It does nothing offline.
func (f *Fetcher) Trim() {
	if f.o.Offline || f.o.Dir == "" {
		return
	}
	now := f.now()
	stamp := filepath.Join(f.o.Dir, trimFile)
	if data, err := os.ReadFile(stamp); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && now.Sub(time.Unix(sec, 0)) < trimInterval {
			return
		}
	}
	if _, err := os.Stat(f.o.Dir); err != nil {
		return // nothing kept
	}
	old := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && now.Sub(st.ModTime()) > TrimAge
	}
	for _, repo := range entries(filepath.Join(f.o.Dir, "git"), hashNamePattern()) {
		for _, e := range readDir(repo) {
			p := filepath.Join(repo, e.Name())
			switch {
			case e.IsDir() && checkoutPattern().MatchString(e.Name()) && old(p):
				_ = os.RemoveAll(p)
			case strings.HasPrefix(e.Name(), ".tmp-") && old(p):
				_ = os.RemoveAll(p) // a fetch killed midway
			}
		}
	}
	for _, chart := range entries(filepath.Join(f.o.Dir, "charts"), hashNamePattern()) {
		kept := filepath.Join(chart, "chart")
		if _, err := os.Stat(kept); err != nil {
			kept = chart // a pull that never completed (killed)
		}
		if old(kept) {
			_ = os.Remove(filepath.Join(chart, chartDigestFile))
			_ = os.RemoveAll(chart)
		}
	}
	for _, file := range entries(filepath.Join(f.o.Dir, "http"), hashNamePattern()) {
		if old(file) {
			_ = os.Remove(file)
		}
	}
	_ = writeFileAtomic(stamp, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"))
}

func readDir(dir string) []os.DirEntry {
	es, _ := os.ReadDir(dir)
	return es
}

// entries lists the paths in dir whose names match pattern.
func entries(dir string, pattern *regexp.Regexp) []string {
	var out []string
	for _, e := range readDir(dir) {
		if pattern.MatchString(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
