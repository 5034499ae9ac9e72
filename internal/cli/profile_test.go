package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// traceFile is the part of the Chrome trace event format the test reads.
type traceFile struct {
	TraceEvents []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		TS   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		TID  int            `json:"tid"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func readTrace(t *testing.T, path string) traceFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tf traceFile
	if err := json.Unmarshal(data, &tf); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	return tf
}

// TestProfileFlags runs build-all cold with --cpuprofile, --memprofile and
// --trace and checks the files: pprof profiles (gzip), and a trace with a
// span per node and stages on the nodes' lanes; then, after one root's
// file changed, a second run whose trace shows the unchanged base taken
// from the cache.
func TestProfileFlags(t *testing.T) {
	tree, roots := newRepo(t)
	tmp := t.TempDir()
	cpu, mem, tr := filepath.Join(tmp, "cpu.pprof"), filepath.Join(tmp, "mem.pprof"), filepath.Join(tmp, "trace.json")
	cacheDir := filepath.Join(tmp, "cache")
	code, _, stderr := buildAll(t, tree, cacheDir, filepath.Join(tmp, "out"), "--cpuprofile", cpu, "--memprofile", mem, "--trace", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a gzipped pprof profile (%v)", p, err)
		}
	}
	tf := readTrace(t, tr)
	nodes, stages := map[string]bool{}, 0
	for _, e := range tf.TraceEvents {
		switch {
		case strings.HasPrefix(e.Cat, "node"):
			nodes[e.Name] = true
			if e.Args["cached"] != false {
				t.Errorf("cold run: node %s cached", e.Name)
			}
		case strings.HasPrefix(e.Cat, "stage"):
			stages++
			if e.Ph != "X" || e.Dur < 0 || e.TID < 1 {
				t.Errorf("bad stage event %+v", e)
			}
		}
	}
	if len(nodes) < len(roots) || stages == 0 {
		t.Fatalf("trace has %d nodes, %d stages; want at least %d nodes and some stages", len(nodes), stages, len(roots))
	}

	// Change one overlay: its base comes from the cache.
	var k string
	for _, r := range roots {
		if !strings.Contains(r, "base") {
			k = filepath.Join(tree, r, "kustomization.yaml")
			break
		}
	}
	data, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k, append(data, []byte("\nnamePrefix: changed-\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = buildAll(t, tree, cacheDir, filepath.Join(tmp, "out"), "--trace", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	hit := false
	for _, e := range readTrace(t, tr).TraceEvents {
		if strings.HasPrefix(e.Cat, "node") && e.Args["cached"] == true {
			hit = true
		}
	}
	if !hit {
		t.Errorf("warm run after one overlay changed: no node taken from the cache in the trace")
	}
}

// TestBuildTracePhases: `kpipe build --trace` shows the command's own
// steps on lane 0, one after the other, around the nodes: a first build
// opens the cache, misses its lookup, listens for stop signals (--trace
// writes a file), loads, builds, writes the output, records the root and
// closes the cache; the same build again opens, finds the root unchanged,
// writes the stored output and closes.
func TestBuildTracePhases(t *testing.T) {
	tmp := t.TempDir()
	cacheDir, tr := filepath.Join(tmp, "cache"), filepath.Join(tmp, "trace.json")
	phases := func() []string {
		t.Helper()
		code, out, stderr := kpipe(t, "build", "../../testdata/examples/prod", "--cache-dir", cacheDir, "--trace", tr)
		if code != 0 || out == "" {
			t.Fatalf("exit %d, %d bytes out: %s", code, len(out), stderr)
		}
		var names []string
		end := 0.0
		for _, e := range readTrace(t, tr).TraceEvents {
			if e.Cat != "phase" {
				continue
			}
			if e.TID != 0 || e.TS < end-0.001 {
				t.Errorf("phase %s on lane %d at %.0f us, before the last one ended (%.0f)", e.Name, e.TID, e.TS, end)
			}
			end = e.TS + e.Dur
			names = append(names, e.Name)
		}
		return names
	}
	if got, want := strings.Join(phases(), ","), "open cache,lookup,listen for signals,load,build,output,record,close cache"; got != want {
		t.Errorf("first build's phases: %s, want %s", got, want)
	}
	if got, want := strings.Join(phases(), ","), "open cache,lookup,output,close cache"; got != want {
		t.Errorf("the build again: %s, want %s", got, want)
	}
}
