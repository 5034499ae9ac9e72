package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kpipe/kpipe/internal/cli/ext"
	"github.com/kpipe/kpipe/internal/cli/full"
	"github.com/kpipe/kpipe/internal/engine"
)

// fullSet is every extension (kpipe-full's): the tests run the command
// line in-process with it; TestLeanHandsOver checks the kpipe binary's
// handing over.
func fullSet() *ext.Set {
	s := full.Set()
	return &s
}

// kpipe runs the CLI in-process and returns its exit code, stdout and stderr.
func kpipe(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), fullSet(), append([]string{"kpipe"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestBuildExample(t *testing.T) {
	want, err := os.ReadFile("../../testdata/examples/prod.expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := kpipe(t, "build", "../../testdata/examples/prod")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != string(want) {
		t.Errorf("output differs from kustomize's (testdata/examples/prod.expected.yaml):\n%s", out)
	}
}

func TestBuildOutputFileAndDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out.yaml")
	if code, _, errOut := kpipe(t, "build", "../../testdata/examples/prod", "-o", file); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("../../testdata/examples/prod.expected.yaml")
	if !bytes.Equal(got, want) {
		t.Errorf("-o FILE content differs:\n%s", got)
	}

	outDir := filepath.Join(dir, "split")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := kpipe(t, "build", "../../testdata/examples/prod", "--output", outDir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	entries, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// kustomize names files <group>_<version>_<kind>_<name>.yaml.
	wantNames := "apps_v1_deployment_prod-hello.yaml v1_service_prod-hello.yaml"
	if strings.Join(names, " ") != wantNames {
		t.Errorf("files = %v, want %s", names, wantNames)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		dir  string
		want []string // substrings of the error
	}{
		{"malformed-yaml", []string{"MalformedYAMLError", "cm.yaml", "line 5"}},
		{"duplicate-keys", []string{`mapping key "a" already defined`, "cm.yaml", "line 7"}},
		{"missing-file", []string{"missing.yaml", "no such file or directory"}},
		{"no-kustomization", []string{"unable to find one of 'kustomization.yaml'", "no-kustomization"}},
		{"escapes-root/root", []string{"security; file", "outside.yaml", "is not in or below"}},
		{"cycle/a", []string{"cycle detected", "cycle/a -> ", "cycle/b -> ", "cycle/a)"}},
		{"json-patch-missing-path", []string{"json-patch-missing-path/kustomization.yaml", "PatchTransformer", "doc is missing path: /data/missing/x"}},
		{"replacement-no-source", []string{"replacement-no-source/kustomization.yaml", "nothing selected by Secret.[noVer].[noGrp]/nope"}},
		{"generator-escapes/root", []string{"generator-escapes/root/kustomization.yaml", `configMapGenerator "cfg"`, "secret.properties' is not in or below"}},
		{"duplicate-id", []string{"may not add resource with an already registered id: ConfigMap.v1.[noGrp]/same.[noNs]", "two.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.yaml")
			code, stdout, stderr := kpipe(t, "build", filepath.Join("../../testdata/bad", tc.dir), "-o", out)
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("error %q does not mention %q", stderr, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("-o file was written despite the error")
			}
		})
	}
}

func TestUnsupportedFlag(t *testing.T) {
	code, _, stderr := kpipe(t, "build", "../../testdata/examples/prod", "--mount", "type=bind,src=/a,dst=/b")
	if code != 1 || !strings.Contains(stderr, "--mount: not supported yet") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestHelmFlags checks that the --helm-* flags reach helm, through a
// stand-in for helm that prints its arguments.
func TestHelmFlags(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake helm is a shell script")
	}
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml":   "helmCharts:\n- name: c\n  releaseName: r\n",
		"charts/c/Chart.yaml":  "apiVersion: v2\nname: c\nversion: 1.0.0\n",
		"charts/c/values.yaml": "",
		"fakehelm": `#!/bin/sh
if [ "$1" = version ]; then echo v3.10.2; exit 0; fi
shift 3
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: args\ndata:\n  flags: "%s"\n' "$*"
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := kpipe(t, "build", dir, "--enable-helm", "--helm-command", filepath.Join(dir, "fakehelm"),
		"--helm-api-versions", "a/v1", "--helm-api-versions", "b/v1", "--helm-kube-version", "1.29", "--helm-debug")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "--api-versions a/v1 --api-versions b/v1 --kube-version 1.29 --debug kind:") {
		t.Errorf("helm did not get the flags:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := kpipe(t, "version")
	if code != 0 || !strings.HasPrefix(out, engine.KustomizeVersion+"+kpipe.") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// TestMain keeps the tests' cache out of the user's cache directory. With
// KPIPE_TEST_AS_KPIPE=1 the test binary is kpipe itself, so that tests
// can start real kpipe processes: either called through a link named kpipe
// (scripts that call kpipe, see TestFnRunNginx), or as `TESTBINARY -- ARGS`.
// With KPIPE_TEST_FUNCTION=NAME it is the KRM function NAME (testFunction).
func TestMain(m *testing.M) {
	if name := os.Getenv("KPIPE_TEST_FUNCTION"); name != "" {
		os.Exit(testFunction(name, os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("KPIPE_TEST_AS_KPIPE") == "1" {
		args := os.Args
		if len(args) > 1 && args[1] == "--" {
			args = append([]string{"kpipe"}, args[2:]...)
		}
		ctx, stopped := stopOnSignal(args)
		os.Exit(stopped(run(ctx, fullSet(), args, os.Stdout, os.Stderr)))
	}
	dir, err := os.MkdirTemp("", "kpipe-test-cache-")
	if err != nil {
		panic(err)
	}
	// Go commands the tests run keep the user's build cache, which
	// otherwise follows XDG_CACHE_HOME into the empty directory.
	if os.Getenv("GOCACHE") == "" {
		if uc, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(uc, "go-build"))
		}
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	if d, ok := serveBinDir.Load().(string); ok {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// Plugin flags: --enable-alpha-plugins and --enable-exec gate a KRM exec
// function, --env reaches it, --plugin-timeout bounds it; a failing build
// prints nothing on stdout.
func TestPluginFlags(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "transformers:\n- fn.yaml\n",
		"fn.yaml":            "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n",
		"fn.sh":              "#!/bin/sh\ncat >/dev/null\n[ -n \"$HANG\" ] && sleep 30\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: %s\\n' \"$NAME\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := kpipe(t, "build", dir, "--no-cache", "--enable-alpha-plugins")
	if code != 1 || out != "" || !strings.Contains(errOut, "--enable-exec") {
		t.Errorf("without --enable-exec: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = kpipe(t, "build", dir, "--no-cache", "--enable-alpha-plugins", "--enable-exec", "-e", "NAME=from-env")
	if code != 0 || out != "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-env\n" {
		t.Errorf("with --env: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = kpipe(t, "build", dir, "--no-cache", "--enable-alpha-plugins", "--enable-exec", "--env", "HANG=1", "--plugin-timeout", "300ms")
	if code != 1 || out != "" || !strings.Contains(errOut, "timed out after 300ms") || !strings.Contains(errOut, "fn.yaml") {
		t.Errorf("hanging plugin: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// A run that names a command sets up that command only, and every command
// the full tree lists can be named so.
func TestRootHoldsTheCommandRun(t *testing.T) {
	full := newRoot(io.Discard, io.Discard, []string{"kpipe"})
	if len(full.Commands) < 9 {
		t.Fatalf("the full tree has %d commands", len(full.Commands))
	}
	for _, c := range full.Commands {
		one := newRoot(io.Discard, io.Discard, []string{"kpipe", c.Name, "--help"})
		if len(one.Commands) != 1 || one.Commands[0].Name != c.Name {
			var names []string
			for _, o := range one.Commands {
				names = append(names, o.Name)
			}
			t.Errorf("kpipe %s: the root holds %v, want [%s]", c.Name, names, c.Name)
		}
	}
	if got := newRoot(io.Discard, io.Discard, []string{"kpipe", "bulid"}); len(got.Commands) != len(full.Commands) {
		t.Errorf("a misspelt command: %d commands, want all %d (for the error's suggestions)", len(got.Commands), len(full.Commands))
	}
}

// A build reserves huge pages for what its own load read, not for what
// the process holds already: a small root stays under bigBuildLoad with 2
// MiB allocated before (as package initialisers do), and a root of some 2
// MB of resources goes over it.
func TestLoadRootBigByItsOwnLoad(t *testing.T) {
	held := make([]byte, 2<<20)
	g, errs := engine.LoadContext(context.Background(), []string{"../../testdata/examples/prod"}, engine.LoadOptions{})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if bigLoad(g) {
		t.Errorf("testdata/examples/prod: a big load, with 2 MiB held before it")
	}
	runtime.KeepAlive(held)

	dir := t.TempDir()
	var res strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&res, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  value: %q\n", i, strings.Repeat("x", 900))
	}
	writeFiles(t, dir, map[string]string{
		"cms.yaml":           res.String(),
		"kustomization.yaml": "resources:\n- cms.yaml\n",
	})
	g, errs = engine.LoadContext(context.Background(), []string{dir}, engine.LoadOptions{})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if !bigLoad(g) {
		t.Errorf("a root of 2,000 ConfigMaps (%d bytes): not a big load", res.Len())
	}
}

// Every flag of every command answers urfave/cli as it did before
// prepare worked out its names once (namedFlag): the same names, help
// line, usage, default and visibility; and every bool, string, int and
// duration flag is so wrapped.
func TestNamedFlagsAnswerAsTheirFlags(t *testing.T) {
	raw := map[string]cli.Flag{} // "command path/flag name" -> the flag as made
	var walkRaw func(path string, cs []*cli.Command)
	walkRaw = func(path string, cs []*cli.Command) {
		for _, c := range cs {
			for _, f := range c.Flags {
				raw[path+c.Name+"/"+f.Names()[0]] = f
			}
			walkRaw(path+c.Name+" ", c.Subcommands)
		}
	}
	walkRaw("", []*cli.Command{buildCommand(), buildAllCommand(), diffCommand(), affectedCommand(),
		cacheCommand(), reportCommand(), fnCommand(), editCommand(), versionCommand(), argocdCommand(), fluxCommand()})
	wrapped := 0
	var walk func(path string, cs []*cli.Command)
	walk = func(path string, cs []*cli.Command) {
		for _, c := range cs {
			for _, f := range c.Flags {
				key := path + c.Name + "/" + f.Names()[0]
				if f.Names()[0] == "stack-trace" {
					continue // prepare adds it (kustomize's global flag)
				}
				r, ok := raw[key]
				if !ok {
					t.Errorf("%s: no such flag as made", key)
					continue
				}
				delete(raw, key)
				if _, ok := f.(*namedFlag); ok {
					wrapped++
				} else {
					switch r.(type) {
					case *cli.BoolFlag, *cli.StringFlag, *cli.IntFlag, *cli.DurationFlag:
						t.Errorf("%s: a %T not wrapped", key, r)
					}
				}
				if !reflect.DeepEqual(f.Names(), r.Names()) || f.String() != r.String() {
					t.Errorf("%s: names %v, help %q; as made: %v, %q", key, f.Names(), f.String(), r.Names(), r.String())
				}
				fd, rd := f.(cli.DocGenerationFlag), r.(cli.DocGenerationFlag)
				if fd.TakesValue() != rd.TakesValue() || fd.GetUsage() != rd.GetUsage() || fd.GetValue() != rd.GetValue() || fd.GetDefaultText() != rd.GetDefaultText() {
					t.Errorf("%s: answers urfave/cli's documentation otherwise than as made", key)
				}
				fv, rv := f.(cli.CategorizableFlag), r.(cli.CategorizableFlag)
				if fv.IsVisible() != rv.IsVisible() || fv.GetCategory() != rv.GetCategory() {
					t.Errorf("%s: visibility or category differs from as made", key)
				}
			}
			walk(path+c.Name+" ", c.Subcommands)
		}
	}
	walk("", newRoot(io.Discard, io.Discard, []string{"kpipe"}).Commands)
	for key := range raw {
		t.Errorf("%s: missing from the prepared commands", key)
	}
	if wrapped < 60 {
		t.Errorf("%d flags wrapped, want kpipe's bool, string, int and duration flags (over 60)", wrapped)
	}
}
