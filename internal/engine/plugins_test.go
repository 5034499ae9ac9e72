package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// pluginEnv is an environment for plugin tests: a plugin home under dir
// (XDG_CONFIG_HOME), the PATH of this process, and extra entries.
func pluginEnv(dir string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg")}, extra...)
}

// writeExec writes an executable script.
func writeExec(t *testing.T, path, script string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// legacyPlugin writes an exec plugin for apiVersion example.com/v1 and kind
// under root's plugin home, and returns its path.
func legacyPlugin(t *testing.T, root, kind, script string) string {
	p := filepath.Join(root, "xdg", "kustomize", "plugin", "example.com", "v1", strings.ToLower(kind), kind)
	writeExec(t, p, script)
	return p
}

// buildWith builds dir with opts and returns its output or error.
func buildWith(t *testing.T, dir string, opts Options) (string, error) {
	t.Helper()
	g, errs := Load([]string{dir}, loaders.RootOnly)
	res := NewBuilder(g, opts).Run(context.Background(), errs)[0]
	if res.Err != nil {
		return "", res.Err
	}
	return string(res.YAML), nil
}

func mustBuild(t *testing.T, dir string, opts Options) string {
	t.Helper()
	out, err := buildWith(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("build succeeded, want an error containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q\ndoes not contain %q", err, p)
		}
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        command:
        - sleep
        - "3600"
        envFrom:
        - configMapRef:
            name: chart
`

// A ChartInflator-style generator: an exec plugin found under
// $XDG_CONFIG_HOME that reads its config file, asks for a hash suffix, and
// sees the kustomization root as its working directory and in
// KUSTOMIZE_PLUGIN_CONFIG_ROOT.
func TestExecPluginGenerator(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\ngenerators:\n- chart.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/chart.yaml":         "apiVersion: example.com/v1\nkind: ChartInflator\nmetadata:\n  name: inflate\nchartName: chart\n",
	})
	legacyPlugin(t, root, "ChartInflator", `#!/bin/sh
name=$(sed -n 's/^chartName: *//p' "$1")
cat <<END
apiVersion: v1
kind: ConfigMap
metadata:
  name: $name
  annotations:
    kustomize.config.k8s.io/needs-hash: "true"
    keep: me
data:
  root: $KUSTOMIZE_PLUGIN_CONFIG_ROOT
  pwd: $(pwd)
  config: "$(printf '%s' "$KUSTOMIZE_PLUGIN_CONFIG_STRING" | grep -c 'kind: ChartInflator')"
END
`)
	dir := filepath.Join(root, "app")
	real, _ := filepath.EvalSymlinks(dir)
	out := mustBuild(t, dir, Options{EnableAlphaPlugins: true, PluginEnviron: pluginEnv(root)})
	for _, want := range []string{"root: " + real, "pwd: " + real, `config: "1"`, "keep: me", "  name: chart-"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "needs-hash") {
		t.Errorf("generator-option annotation left in the output:\n%s", out)
	}
	// The deployment follows the generated name with its hash.
	i := strings.Index(out, "  name: chart-")
	name := strings.Fields(out[i:])[1]
	if strings.Count(out, "name: "+name+"\n") != 2 {
		t.Errorf("the reference does not follow %s:\n%s", name, out)
	}
}

// A transformer that edits container commands, with arguments from
// argsOneLiner; it receives each object with its ID annotation.
func TestExecPluginTransformerEditsCommands(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\ntransformers:\n- cmd.yaml\nnamePrefix: p-\n",
		"app/deploy.yaml":        deployment,
		"app/cmd.yaml":           "apiVersion: example.com/v1\nkind: CommandSetter\nmetadata:\n  name: cmd\nargsOneLiner: --command 'pause now'\n",
	})
	legacyPlugin(t, root, "CommandSetter", `#!/bin/sh
[ "$2" = --command ] || { echo "bad args: $*" >&2; exit 1; }
input=$(cat)
printf '%s\n' "$input" | grep -q 'kustomize.config.k8s.io/id' || { echo "no id annotation" >&2; exit 1; }
echo "editing commands" >&2
printf '%s\n' "$input" | sed "s/- sleep\$/- $3/; s/- \"3600\"\$/- \"1\"/"
`)
	var mu sync.Mutex
	var warnings []string
	warn := func(m string) { mu.Lock(); warnings = append(warnings, m); mu.Unlock() }
	out := mustBuild(t, filepath.Join(root, "app"), Options{EnableAlphaPlugins: true, PluginEnviron: pluginEnv(root), Warn: warn})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "CommandSetter 'cmd'") || !strings.Contains(warnings[0], "editing commands") {
		t.Errorf("the plugin's stderr was not passed on: %q", warnings)
	}
	for _, want := range []string{"- pause now\n", `- "1"`, "name: p-app"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sleep") || strings.Contains(out, "kustomize.config.k8s.io/id") {
		t.Errorf("command not edited or ID annotation left:\n%s", out)
	}
}

// A KRM exec function: a ResourceList in, a ResourceList out, index
// annotations stripped, --env passed.
func TestKRMExecFunction(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\ntransformers:\n- fn.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/fn.yaml": `apiVersion: example.com/v1
kind: Retagger
metadata:
  name: retag
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./retag.sh
`,
	})
	writeExec(t, filepath.Join(root, "app", "retag.sh"), `#!/bin/sh
input=$(cat)
printf '%s\n' "$input" | grep -q '^kind: ResourceList' || { echo "not a ResourceList" >&2; exit 1; }
printf '%s\n' "$input" | grep -q 'config.kubernetes.io/local-config' || { echo "no local-config on functionConfig" >&2; exit 1; }
printf '%s\n' "$input" | sed "s/image: nginx\$/image: nginx:$TAG/"
`)
	out := mustBuild(t, filepath.Join(root, "app"), Options{EnableAlphaPlugins: true, EnableExec: true,
		FnEnv: []string{"TAG=1.25"}, PluginEnviron: pluginEnv(root)})
	if !strings.Contains(out, "image: nginx:1.25") {
		t.Errorf("function did not run:\n%s", out)
	}
	for _, bad := range []string{"index", "config.k8s.io/id", "Retagger"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q:\n%s", bad, out)
		}
	}

	_, err := buildWith(t, filepath.Join(root, "app"), Options{EnableAlphaPlugins: true, PluginEnviron: pluginEnv(root)})
	wantErr(t, err, "--enable-exec", "Retagger 'retag'", "fn.yaml")
}

// A function that reports an error result fails the build with its
// message.
func TestKRMFunctionErrorResults(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\nvalidators:\n- fn.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/fn.yaml":            "apiVersion: example.com/v1\nkind: Policy\nmetadata:\n  name: policy\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./policy.sh\n",
	})
	writeExec(t, filepath.Join(root, "app", "policy.sh"), `#!/bin/sh
cat >/dev/null
cat <<END
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
results:
- message: containers must not run sleep
  severity: error
  resourceRef: {kind: Deployment, name: app}
- message: just saying
  severity: info
END
`)
	_, err := buildWith(t, filepath.Join(root, "app"), Options{EnableAlphaPlugins: true, EnableExec: true, PluginEnviron: pluginEnv(root)})
	wantErr(t, err, "containers must not run sleep", "Deployment app", "[info] just saying", "Policy 'policy'")

	// A function that exits non-zero: its results are quoted with its
	// stderr.
	writeExec(t, filepath.Join(root, "app", "policy.sh"), `#!/bin/sh
cat >/dev/null
echo "policy failed" >&2
printf 'kind: ResourceList\nresults:\n- message: no sleeping\n'
exit 1
`)
	_, err = buildWith(t, filepath.Join(root, "app"), Options{EnableAlphaPlugins: true, EnableExec: true, PluginEnviron: pluginEnv(root)})
	wantErr(t, err, "exited with status 1", "policy failed", "[error] no sleeping")
}

// Validators may add the validated-by label and nothing else.
func TestValidators(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\nvalidators:\n- v.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/v.yaml":             "apiVersion: example.com/v1\nkind: Validator\nmetadata:\n  name: v\n",
	})
	p := legacyPlugin(t, root, "Validator", "#!/bin/sh\nsed 's/^metadata:$/metadata:\\n  labels:\\n    validated-by: me/'\n")
	opts := Options{EnableAlphaPlugins: true, PluginEnviron: pluginEnv(root)}
	out := mustBuild(t, filepath.Join(root, "app"), opts)
	if !strings.Contains(out, "validated-by: me") {
		t.Errorf("validator label missing:\n%s", out)
	}
	writeExec(t, p, "#!/bin/sh\nsed 's/image: nginx/image: evil/'\n")
	_, err := buildWith(t, filepath.Join(root, "app"), opts)
	wantErr(t, err, "validator shouldn't modify the resource map", "Deployment")

	// A KRM function validator that passes its items through is not
	// taken for a modification because of the path annotations the
	// function runner adds.
	fnRoot := writeTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- deploy.yaml\nvalidators:\n- fn.yaml\n",
		"deploy.yaml":        deployment,
		"fn.yaml":            "apiVersion: example.com/v1\nkind: Check\nmetadata:\n  name: check\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./check.sh\n",
	})
	writeExec(t, filepath.Join(fnRoot, "check.sh"), "#!/bin/sh\ncat\n")
	out = mustBuild(t, fnRoot, Options{EnableAlphaPlugins: true, EnableExec: true, PluginEnviron: pluginEnv(fnRoot)})
	if strings.Contains(out, "path") || !strings.Contains(out, "image: nginx\n") {
		t.Errorf("validator output:\n%s", out)
	}
}

// Bad plugins: each a clear error naming the plugin and its config file.
func TestBadPlugins(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\ntransformers:\n- bad.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/bad.yaml":           "apiVersion: example.com/v1\nkind: Bad\nmetadata:\n  name: bad\n",
	})
	dir := filepath.Join(root, "app")
	opts := Options{EnableAlphaPlugins: true, PluginEnviron: pluginEnv(root), PluginTimeout: 500 * time.Millisecond}
	path := filepath.Join(root, "xdg", "kustomize", "plugin", "example.com", "v1", "bad", "Bad")

	_, err := buildWith(t, dir, Options{PluginEnviron: pluginEnv(root)})
	wantErr(t, err, "external plugins disabled", "'Bad'", "--enable-alpha-plugins")

	_, err = buildWith(t, dir, opts)
	wantErr(t, err, "Bad 'bad'", "bad.yaml", "'"+path+"'", "'"+path+".so'")

	cases := []struct {
		name, script string
		want         []string
	}{
		{"exit", "#!/bin/sh\necho 'it went wrong' >&2\necho second line >&2\nexit 3\n", []string{"exited with status 3", "it went wrong", "second line"}},
		{"crash", "#!/bin/sh\nkill -SEGV $$\n", []string{"crashed", "signal"}},
		{"hang", "#!/bin/sh\necho started >&2\nsleep 30\n", []string{"timed out after 500ms", "--plugin-timeout", "started"}},
		{"garbage", "#!/bin/sh\necho '{{{ not: [yaml'\n", []string{"not valid YAML", "{{{ not: [yaml"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writeExec(t, path, c.script)
			start := time.Now()
			_, err := buildWith(t, dir, opts)
			wantErr(t, err, append(c.want, "Bad 'bad'", "bad.yaml")...)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = buildWith(t, dir, opts)
	wantErr(t, err, "unexecutable plugin", path)
}

// A plugin's cache entry is keyed by its executable and environment: it
// runs once for many builds, again when its script or environment change,
// every time with --no-cache-plugins; --verify-cache catches a plugin
// whose output changes from run to run.
func TestPluginCaching(t *testing.T) {
	root := writeTree(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- deploy.yaml\ntransformers:\n- count.yaml\n",
		"app/deploy.yaml":        deployment,
		"app/count.yaml":         "apiVersion: example.com/v1\nkind: Counter\nmetadata:\n  name: count\n",
	})
	dir := filepath.Join(root, "app")
	counter := filepath.Join(root, "runs")
	script := "#!/bin/sh\necho run >> \"$COUNTER\"\ncat\n"
	path := legacyPlugin(t, root, "Counter", script)
	store := cache.Open(context.Background(), cache.Options{Dir: filepath.Join(root, "cache")})
	defer store.Close()
	runs := func() int {
		b, _ := os.ReadFile(counter)
		return strings.Count(string(b), "run")
	}
	build := func(opts Options) (string, error) {
		opts.EnableAlphaPlugins = true
		if opts.PluginEnviron == nil {
			opts.PluginEnviron = pluginEnv(root, "COUNTER="+counter)
		}
		files, _ := cache.LoadFileIndex(store.Dir())
		opts.Cache = Cache{Store: store, Files: files, Version: "test"}
		defer store.Flush()
		return buildWith(t, dir, opts)
	}
	first, err := build(Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := build(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first != second || runs() != 1 {
		t.Fatalf("plugin ran %d times for two equal builds (want 1)", runs())
	}
	writeExec(t, path, script+"# changed\n")
	if _, err := build(Options{}); err != nil || runs() != 2 {
		t.Fatalf("changed script: %d runs, err %v (want 2)", runs(), err)
	}
	if _, err := build(Options{PluginEnviron: pluginEnv(root, "COUNTER="+counter, "NEW=1")}); err != nil || runs() != 3 {
		t.Fatalf("changed environment: %d runs, err %v (want 3)", runs(), err)
	}
	if _, err := build(Options{NoCachePlugins: true}); err != nil || runs() != 4 {
		t.Fatalf("--no-cache-plugins: %d runs, err %v (want 4)", runs(), err)
	}
	if _, err := build(Options{VerifyCache: true}); err != nil || runs() != 5 {
		t.Fatalf("--verify-cache on a pure plugin: %d runs, err %v (want 5)", runs(), err)
	}
	// Now the plugin's output changes with every run.
	writeExec(t, path, "#!/bin/sh\necho run >> \"$COUNTER\"\nsed \"s/name: app/name: app-$(wc -l < \"$COUNTER\" | tr -d ' ')/\"\n")
	if _, err := build(Options{}); err != nil {
		t.Fatal(err)
	}
	_, err = build(Options{VerifyCache: true})
	wantErr(t, err, "--verify-cache", "Counter 'count'", "different output")
	_, err = build(Options{VerifyCache: true, NoCachePlugins: true})
	wantErr(t, err, "--verify-cache", "Counter 'count'", "different output")
}
