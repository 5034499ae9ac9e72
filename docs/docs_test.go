// Package docs holds kpipe's documentation beyond the README, and the test
// that keeps both from going stale: every shell example marked runnable
// runs, against a copy of testdata/, and prints what the page shows where
// it shows an output; the layout table says what `go list` says; every
// page is linked and every relative link resolves.
//
// Marking, in Markdown (invisible when rendered):
//
//	<!-- doc-test -->            the next fenced block runs (bash -e), in the
//	                             page's sandbox: a copy of testdata/ with kpipe
//	                             on PATH, its own cache, HOME and TMPDIR; the
//	                             blocks of one page run in order, in one
//	                             sandbox, each in the directory the one before
//	                             ended in (as typed at one prompt: a `cd` into
//	                             a `mktemp -d` directory holds for the page)
//	<!-- doc-test: repo -->      the next block runs in the repository itself
//	                             (read-only commands: go run, go vet)
//	<!-- doc-test: output -->    the next block is what the runnable block before
//	                             it prints (stdout and stderr); a line "..."
//	                             stands for any lines, a line ending in "..."
//	                             for any line that starts so, and timings
//	                             ("in 0.07s") are compared as "in 0.00s"
//
// A runnable block that prints a line "doc-test skip: REASON" (a server it
// needs is not installed, say) is not compared with its output block: the
// test logs the reason, as other tests skip.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// kpipeDir holds kpipe built from this module (TestMain).
var kpipeDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kpipe-docs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kpipeDir = dir
	// kpipe, and beside it kpipe-full and the cache server, which kpipe
	// hands runs and `kpipe cache serve` over to (ci.md's remote cache,
	// cache-server.md), as the release archives hold them.
	for _, name := range []string{"kpipe", "kpipe-full", "kpipe-cache-server"} {
		bin := filepath.Join(dir, name)
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		// As plain `go build` builds them (what `go install` gives a
		// user), reusing what go test compiled: CGO_ENABLED=0, the README's
		// static build, prints the same, and compiled every package that
		// reaches net a second time on a fresh clone.
		cmd := exec.Command("go", "build", "-o", bin, "../cmd/"+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build ../cmd/%s: %v\n%s", name, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pages are the Markdown files the test reads: the README and docs/.
func pages(t *testing.T) []string {
	t.Helper()
	list := []string{"../README.md"}
	more, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(more)
	return append(list, more...)
}

// block is a fenced block of a page.
type block struct {
	line int    // of the opening fence, 1-based
	mark string // "run", "repo", "output" or ""
	text string
}

// blocks reads the fenced blocks of a Markdown file, with their marks.
func blocks(t *testing.T, path string) []block {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	var fence, mark string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.text += line + "\n"
			continue
		}
		switch {
		case trimmed == "<!-- doc-test -->":
			mark = "run"
		case trimmed == "<!-- doc-test: repo -->":
			mark = "repo"
		case trimmed == "<!-- doc-test: output -->":
			mark = "output"
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			for strings.HasPrefix(trimmed[len(fence):], fence[:1]) {
				fence += fence[:1]
			}
			cur = &block{line: n, mark: mark}
			mark = ""
		case trimmed != "":
			mark = "" // a mark applies to the block right after it
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a fenced block is not closed", path, cur.line)
	}
	return out
}

// sandbox makes a page's directory: a copy of testdata/, and a home and
// a cache of its own.
func sandbox(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir("../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", p)
		dst := filepath.Join(dir, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm())
		}
		return nil // symlinks and the like: not needed by examples
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home", "cache", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, ".doc-test", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// commitSandbox makes the sandbox a git repository with everything in it
// committed, as a fresh clone is (the test's own files excluded).
func commitSandbox(t *testing.T, box string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A", "--", ".", ":!.doc-test"},
		{"-c", "user.name=doc", "-c", "user.email=doc@example.com", "commit", "-q", "-m", "clone"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = box
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(box, ".git", "info", "exclude"), []byte(".doc-test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

var timing = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(s|ms)\b`)

// matches reports whether got is what the page shows: line by line, a
// line "..." standing for any lines, timings compared as 0.00s.
func matches(want, got string) bool {
	norm := func(s string) []string {
		s = timing.ReplaceAllString(s, "0.00s")
		return strings.Split(strings.TrimRight(s, "\n"), "\n")
	}
	w, g := norm(want), norm(got)
	var match func(i, j int) bool
	match = func(i, j int) bool {
		switch {
		case i == len(w):
			return j == len(g)
		case w[i] == "...":
			for k := j; k <= len(g); k++ {
				if match(i+1, k) {
					return true
				}
			}
			return false
		case j == len(g):
			return false
		}
		if p, ok := strings.CutSuffix(w[i], "..."); ok && p != "" {
			return strings.HasPrefix(g[j], p) && match(i+1, j+1)
		}
		return w[i] == g[j] && match(i+1, j+1)
	}
	return match(0, 0)
}

// TestExamplesRun runs every block marked runnable in the README and the
// pages of docs/, and compares what it prints with the output block the
// page shows after it.
func TestExamplesRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the examples are bash; checked on unix")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed (apt-get install bash): the documentation's examples are not run")
	}
	total := 0
	for _, page := range pages(t) {
		bs := blocks(t, page)
		t.Run(filepath.Base(page), func(t *testing.T) {
			box, cwd := "", ""
			readme := filepath.Base(page) == "README.md"
			var last *block
			var lastOut string
			for i := range bs {
				b := &bs[i]
				switch b.mark {
				case "run", "repo":
					dir, text := "..", b.text
					if b.mark == "run" {
						if box == "" {
							box = sandbox(t)
							cwd = box
							if readme {
								commitSandbox(t, box)
							}
						}
						// The directory the block ends in is where the next
						// one starts.
						dir, text = cwd, b.text+"\npwd >\"$DOC_TEST_CWD\"\n"
					}
					cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", text)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(),
						"PATH="+kpipeDir+string(os.PathListSeparator)+os.Getenv("PATH"),
						"NO_COLOR=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=doc", "GIT_AUTHOR_EMAIL=doc@example.com",
						"GIT_COMMITTER_NAME=doc", "GIT_COMMITTER_EMAIL=doc@example.com")
					if b.mark == "run" {
						cmd.Env = append(cmd.Env, "HOME="+filepath.Join(box, ".doc-test", "home"),
							"XDG_CACHE_HOME="+filepath.Join(box, ".doc-test", "cache"),
							"TMPDIR="+filepath.Join(box, ".doc-test", "tmp"),
							"DOC_TEST_CWD="+filepath.Join(box, ".doc-test", "cwd"))
					}
					out, err := cmd.CombinedOutput()
					if b.mark == "run" {
						if data, err := os.ReadFile(filepath.Join(box, ".doc-test", "cwd")); err == nil {
							cwd = strings.TrimSpace(string(data))
						}
					}
					if err != nil {
						t.Errorf("%s:%d: the example fails: %v\n%s\n--- it printed:\n%s", page, b.line, err, b.text, out)
					}
					last, lastOut = b, string(out)
					total++
				case "output":
					if last == nil {
						t.Errorf("%s:%d: an output block with no runnable block before it", page, b.line)
						continue
					}
					if i := strings.Index(lastOut, "doc-test skip: "); i >= 0 {
						reason, _, _ := strings.Cut(lastOut[i:], "\n")
						t.Logf("%s:%d: %s", page, last.line, reason)
						last = nil
						continue
					}
					if !matches(b.text, lastOut) {
						t.Errorf("%s:%d: the example at line %d prints\n%s\n--- the page shows\n%s", page, b.line, last.line, lastOut, b.text)
					}
					last = nil
				}
			}
			// The README's examples are followed in a fresh clone: they
			// change nothing there (they work in a scratch directory).
			if readme && box != "" {
				st := exec.Command("git", "status", "--porcelain", "--untracked-files=all")
				st.Dir = box
				if out, err := st.Output(); err != nil || len(out) > 0 {
					t.Errorf("README.md's examples change the clone they run in (git status: %v):\n%s", err, out)
				}
			}
		})
	}
	if total < 10 {
		t.Errorf("only %d runnable examples in the README and docs/", total)
	}
}

// TestLinksResolve: every page of docs/ is linked from the README or from
// another page, and every relative link (and its #anchor) resolves.
func TestLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading := regexp.MustCompile(`(?m)^#+ (.+)$`)
	anchors := func(path string) map[string]bool {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		set := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
			a := strings.ToLower(m[1])
			a = regexp.MustCompile("[^a-z0-9 _-]").ReplaceAllString(a, "")
			set[strings.ReplaceAll(a, " ", "-")] = true
		}
		return set
	}
	linked := map[string]bool{}
	for _, page := range pages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		// Links inside code blocks are code, not links.
		text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(data), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %s: %v", page, target, err)
					continue
				}
				if abs, err := filepath.Abs(path); err == nil {
					linked[abs] = true
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(path)[anchor] {
				t.Errorf("%s: link %s: no heading #%s in %s", page, target, anchor, path)
			}
		}
	}
	for _, page := range pages(t)[1:] {
		if abs, _ := filepath.Abs(page); !linked[abs] {
			t.Errorf("docs/%s is linked from no page", page)
		}
	}
}

// TestLayoutTable: the layout table in architecture.md lists every
// package of the module, each with the kpipe packages it imports, as
// `go list` sees them.
func TestLayoutTable(t *testing.T) {
	readSources(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kpipe/kpipe"
	short := func(p string) string {
		if p == mod {
			return "kpipe"
		}
		return strings.TrimPrefix(p, mod+"/")
	}
	real := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(line, "|")
		var mine []string
		for _, imp := range strings.Fields(imps) {
			if imp == mod || strings.HasPrefix(imp, mod+"/") {
				mine = append(mine, short(imp))
			}
		}
		sort.Strings(mine)
		real[short(pkg)] = strings.Join(mine, ", ")
	}
	data, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)`[^|]*\\|[^|]*\\| ([^|]*) \\|$")
	listed := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		pkg := strings.TrimSuffix(m[1], " (module root)")
		if _, ok := real[pkg]; !ok {
			if !strings.HasPrefix(pkg, "tools/") { // modules of their own
				t.Errorf("the layout table lists %s, which go list does not know", pkg)
			}
			continue
		}
		listed[pkg] = true
		var said []string
		if s := strings.TrimSpace(m[2]); s != "nothing" {
			for _, p := range strings.Split(s, ",") {
				said = append(said, strings.TrimSpace(p))
			}
		}
		sort.Strings(said)
		if got := strings.Join(said, ", "); got != real[pkg] {
			t.Errorf("layout table, %s imports: says %q, go list says %q", pkg, got, real[pkg])
		}
	}
	for pkg := range real {
		if !listed[pkg] && pkg != "docs" {
			t.Errorf("the layout table does not list %s", pkg)
		}
	}
}

// TestReadmeGoVersion: the README asks for the Go version go.mod needs.
func TestReadmeGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Go (" + string(m[1]) + " or later)"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q (go.mod: go %s)", want, m[1])
	}
}
