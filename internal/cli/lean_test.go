package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/cli/ext"
	"github.com/kpipe/kpipe/internal/cli/full"
	"github.com/kpipe/kpipe/internal/depstest"
)

// The kpipe binary links none of what ext.Set holds, nor what made the
// plain `go build` executable dynamically linked (net, os/user, plugin:
// cgo) or slow to start (sprig, semver, pflag): about 1.4 ms of every
// process (benchmarks/RESULTS.md). This fails, naming the importer, when
// a change brings one back by whatever path.
func TestKpipeLinksNoExtension(t *testing.T) {
	depstest.Check(t, "../../cmd/kpipe", "", map[string]string{
		"net":                               "links libc through cgo (a dynamically linked executable)",
		"os/user":                           "links libc through cgo (a dynamically linked executable)",
		"plugin":                            "links libc through cgo and keeps every exported method",
		"runtime/cgo":                       "makes the executable dynamically linked",
		"github.com/Masterminds/sprig/v3":   "initialises sprig's dependencies in every process",
		"github.com/Masterminds/semver/v3":  "compiles its regexps at start",
		"github.com/spf13/pflag":            "imports net",
		"github.com/schollz/progressbar/v3": "imports net/http",
	})
}

// A run of the kpipe binary that needs what it leaves out is handed over
// to kpipe-full beside it: the same stdout, stderr, exit status and files
// as kpipe-full run directly; a download is one kpipe-full process, the
// run staying in kpipe. Without kpipe-full, kpipe says what the run
// needed and how to install it, and prints nothing else; what needs no
// extension runs without it.
func TestLeanHandsOver(t *testing.T) {
	cwd, err := os.Getwd() // (argoRepo changes it)
	if err != nil {
		t.Fatal(err)
	}
	bin := kpipeWithServer(t) // kpipe, kpipe-full and kpipe-cache-server, side by side
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	fullBin := filepath.Join(filepath.Dir(bin), "kpipe-full"+exe)
	alone := filepath.Join(t.TempDir(), "kpipe"+exe)
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}

	duration := regexp.MustCompile(` in [0-9.]+m?s\b`)
	type result struct {
		code           int
		stdout, stderr string
		files          map[string]string
	}
	runIn := func(t *testing.T, b, dir, outDir string, path string, args ...string) result {
		t.Helper()
		cmd := exec.Command(b, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
		if path != "" {
			cmd.Env = append(cmd.Env, "PATH="+path)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		// (Durations differ from run to run.)
		r := result{code: exitCode(err), stdout: stdout.String(), stderr: duration.ReplaceAllString(stderr.String(), " in Ns"), files: map[string]string{}}
		if outDir != "" {
			_ = filepath.WalkDir(outDir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					rel, _ := filepath.Rel(outDir, p)
					r.files[rel] = string(b)
				}
				return nil
			})
			os.RemoveAll(outDir)
		}
		return r
	}

	fluxDir := t.TempDir()
	writeFiles(t, fluxDir, map[string]string{
		"ks.yaml":         fluxKsFile,
		"src/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:${TAG}\n",
	})
	argoDir := argoRepo(t)
	// URL resources, from a server on 127.0.0.1 (one, and a 404).
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cm.yaml" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-the-web\n")
	}))
	defer web.Close()
	urlDir := t.TempDir()
	// A remote cache: kpipe's own server (read only: both runs miss).
	remoteURL := startServe(t, filepath.Join(t.TempDir(), "store")).URL
	cases := []struct {
		name, dir, outDir string
		args              []string
	}{
		// (A command line fluxcmd.ParseCommon declines: -rn is pflag's.)
		{"flux build with flags for pflag", fluxDir, "", []string{"flux", "build", "kustomization", "app", "--path", "./src", "--kustomization-file", "./ks.yaml", "--dry-run", "-rn", "flux-system"}},
		{"the remote cache (net/http)", cwd, "", []string{"build", "../../testdata/examples/prod", "--remote-cache", remoteURL}},
		{"argocd build-all with an ApplicationSet (sprig)", argoDir, filepath.Join(t.TempDir(), "out"),
			[]string{"argocd", "build-all", "--no-cache", "--report", "-"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.outDir != "" {
				args = append(args, "--out-dir", c.outDir)
			}
			want := runIn(t, fullBin, c.dir, c.outDir, "", args...)
			if want.code != 0 || want.stdout == "" && len(want.files) == 0 {
				t.Fatalf("kpipe-full: exit %d, %d files\n%s", want.code, len(want.files), want.stderr)
			}
			got := runIn(t, bin, c.dir, c.outDir, "", args...)
			if got.code != want.code || got.stdout != want.stdout || got.stderr != want.stderr || len(got.files) != len(want.files) {
				t.Errorf("kpipe: exit %d, %d files, stdout\n%s\nstderr\n%s\nkpipe-full: exit %d, %d files, stdout\n%s\nstderr\n%s",
					got.code, len(got.files), got.stdout, got.stderr, want.code, len(want.files), want.stdout, want.stderr)
			}
			for name, content := range want.files {
				if got.files[name] != content {
					t.Errorf("%s differs from kpipe-full's", name)
				}
			}

			// Without kpipe-full.
			r := runIn(t, alone, c.dir, c.outDir, t.TempDir(), args...)
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "needs kpipe-full") ||
				!strings.Contains(r.stderr, installLine) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("kpipe without kpipe-full: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}

	// A URL resource: kpipe builds it, downloading in a `kpipe-full net
	// serve` process (a kpipe-full that logs its arguments shows it); an
	// HTTP error is kpipe-full's, word for word.
	if runtime.GOOS != "windows" {
		logged := t.TempDir()
		if err := os.WriteFile(filepath.Join(logged, "kpipe"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(logged, "argv.log")
		script := "#!/bin/sh\necho \"$*\" >>" + log + "\nexec " + fullBin + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(logged, "kpipe-full"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/cm.yaml", "/missing.yaml"} {
			writeFiles(t, urlDir, map[string]string{"kustomization.yaml": "namePrefix: p-\nresources:\n- " + web.URL + path + "\n"})
			want := runIn(t, fullBin, urlDir, "", "", "build", ".")
			got := runIn(t, filepath.Join(logged, "kpipe"), urlDir, "", "", "build", ".")
			if got.code != want.code || got.stdout != want.stdout || got.stderr != want.stderr {
				t.Errorf("kpipe build of %s: exit %d\n%s\n%s\nkpipe-full: exit %d\n%s\n%s", path, got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			}
			argv, _ := os.ReadFile(log)
			if string(argv) != "net serve\n" {
				t.Errorf("kpipe ran kpipe-full as %q, want one net serve (for %s)", argv, path)
			}
			os.Remove(log)
		}
		r := runIn(t, alone, urlDir, "", t.TempDir(), "build", ".")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "is kpipe-full's") || !strings.Contains(r.stderr, installLine) {
			t.Errorf("a URL resource without kpipe-full: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	}

	// What needs no extension runs without kpipe-full, as kpipe-full runs it.
	for _, args := range [][]string{
		{"build", "../../testdata/examples/prod"},
		{"version", "--short"},
		{"flux", "build-all", "--dry-run", "."},
		{"flux", "build", "kustomization", "app", "--path", "./src", "--kustomization-file", "./ks.yaml", "--dry-run"},
		{"flux", "build", "ks", "app", "--path=./src", "-n", "flux-system", "--kustomization-file=./ks.yaml", "--dry-run", "--recursive"},
	} {
		dir := cwd
		if args[0] == "flux" {
			dir = fluxDir
		}
		want := runIn(t, fullBin, dir, "", "", args...)
		if want.code != 0 || want.stdout == "" && want.stderr == "" {
			t.Fatalf("kpipe-full %s: exit %d, no output\n%s", strings.Join(args, " "), want.code, want.stderr)
		}
		got := runIn(t, alone, dir, "", t.TempDir(), args...)
		if got.code != want.code || got.stdout != want.stdout || got.stderr != want.stderr {
			t.Errorf("kpipe %s alone: exit %d\n%s\n%s\nkpipe-full: exit %d\n%s\n%s", strings.Join(args, " "), got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
		}
	}
}

// A quietened writer still tells a terminal: `diff --color auto` and
// `build-all --progress` look through it to the file, and once the run
// has needed kpipe-full it writes nothing.
func TestQuietWriterKeepsItsFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := &handover{cancel: func(error) {}}
	w := h.quiet(f, false, []string{"kpipe", "diff"})
	if got, ok := terminal(w); !ok || got != f {
		t.Errorf("terminal(quiet(f)) = %v, %v", got, ok)
	}
	if w.(*quietWriter) == nil || h.quiet(f, true, []string{"kpipe", "build"}) != io.Writer(f) {
		t.Error("build's stdout is wrapped")
	}
	io.WriteString(w, "before ")
	_ = h.need("a test")
	io.WriteString(w, "after")
	if b, _ := os.ReadFile(f.Name()); string(b) != "before " {
		t.Errorf("wrote %q", b)
	}
}

// kpipe-full's extensions are all there: an extension added to ext.Set
// and not to full.Set would make kpipe-full hand over to itself.
func TestFullSetIsComplete(t *testing.T) {
	if s := full.Set(); !s.Complete() {
		t.Errorf("full.Set() lacks an extension: %+v", s)
	}
	if s := (ext.Set{}); s.Complete() {
		t.Error("an empty ext.Set is complete")
	}
}
