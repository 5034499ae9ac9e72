package helmrelease

import (
	"errors"
	"testing"
)

const indexYAML = `apiVersion: v1
entries:
  app:
  - {name: app, version: 1.0.0, urls: [app-1.0.0.tgz], created: "2024-01-01T00:00:00Z"}
  - {name: app, version: 1.2.0, urls: [app-1.2.0.tgz], created: "2024-02-01T00:00:00Z"}
  - {name: app, version: 2.0.0-rc.1, urls: [app-2.0.0-rc.1.tgz], created: "2024-03-01T00:00:00Z"}
  - {name: app, version: 1.1.0+old, urls: [old.tgz], created: "2024-01-05T00:00:00Z"}
  - {name: app, version: 1.1.0+new, urls: [new.tgz], created: "2024-01-06T00:00:00Z"}
  - {name: app, version: "1.3", urls: [two-parts.tgz]}
  - {name: app, version: not-semver, urls: [bad.tgz]}
  - {name: app, version: 1.4.0, type: plugin, urls: [bad-type.tgz]}
  - {name: ../app, version: 1.5.0, urls: [bad-name.tgz]}
  empty: []
`

func TestIndexGet(t *testing.T) {
	ix, err := ParseIndex([]byte(indexYAML))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ix.Entries["app"]); n != 6 {
		t.Fatalf("%d valid entries, want 6 (a bad version, type and name dropped)", n)
	}
	for _, c := range []struct{ version, want, err string }{
		{version: "", want: "1.2.0"},
		{version: "*", want: "1.2.0"},
		{version: "~1.1", want: "1.1.0+new"}, // equal but for build metadata: the newer
		{version: "1.1.0+old", want: "1.1.0+old"},
		{version: "<1.1.0", want: "1.0.0"},
		{version: ">=1.0.0-0", want: "2.0.0-rc.1"},
		{version: "1.3", want: "1.3"},                                               // an exact string first
		{version: "~1.3", err: "no 'app' chart with version matching '~1.3' found"}, // two parts are not in ranges
		{version: ">=3", err: "no 'app' chart with version matching '>=3' found"},
		{version: "!!", err: `improper constraint: "!!"`},
	} {
		got, err := ix.Get("app", c.version)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("Get(app, %q): %v, want %s", c.version, err, c.err)
			}
			continue
		}
		if err != nil || got.Version != c.want {
			t.Errorf("Get(app, %q): %v %v, want %s", c.version, got, err, c.want)
		}
	}
	if _, err := ix.Get("nope", ""); !errors.Is(err, ErrNoChartName) {
		t.Error(err)
	}
	if _, err := ix.Get("empty", ""); !errors.Is(err, ErrNoChartVersion) {
		t.Error(err)
	}
	if _, err := ParseIndex(nil); !errors.Is(err, ErrEmptyIndex) {
		t.Error(err)
	}
	if _, err := ParseIndex([]byte("entries: {}\n")); !errors.Is(err, ErrNoAPIVersion) {
		t.Error(err)
	}
}

func TestURLs(t *testing.T) {
	for _, c := range []struct{ base, ref, want string }{
		{"https://h/charts/", "app-1.0.0.tgz", "https://h/charts/app-1.0.0.tgz"},
		{"https://h/charts", "app-1.0.0.tgz", "https://h/charts/app-1.0.0.tgz"},
		{"https://h/charts/?token=x", "sub/app.tgz", "https://h/charts/sub/app.tgz?token=x"},
		{"https://h/charts/", "https://cdn/app.tgz", "https://cdn/app.tgz"},
		{"https://h/charts/", "/abs/app.tgz", "https://h/abs/app.tgz"},
	} {
		if got, err := ResolveReferenceURL(c.base, c.ref); err != nil || got != c.want {
			t.Errorf("ResolveReferenceURL(%q, %q) = %q %v, want %q", c.base, c.ref, got, err, c.want)
		}
	}
	for in, want := range map[string]string{
		"https://h/charts":     "https://h/charts/",
		"https://h/charts///":  "https://h/charts/",
		"https://h":            "https://h/",
		"oci://ghcr.io/org/":   "oci://ghcr.io/org",
		"oci://ghcr.io/org///": "oci://ghcr.io/org",
		"":                     "",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q %v, want %q", in, got, err, want)
		}
	}
}

func TestVersionMetadata(t *testing.T) {
	cs := &ChartSource{ReconcileStrategy: "Revision", ValuesFiles: []string{"v.yaml"}}
	for _, c := range []struct {
		rev  string
		gen  int64
		want string
	}{
		{"main@sha1:0123456789abcdef0123", 3, "0123456789ab.3"},
		{"0123456789abcdef0123", 0, "0123456789ab"},
		{"main/0123456789abcdef0123", 0, "0123456789ab"},
		{"", 7, "7"},
	} {
		if got := VersionMetadata(cs, c.rev, c.gen); got != c.want {
			t.Errorf("VersionMetadata(%q, %d) = %q, want %q", c.rev, c.gen, got, c.want)
		}
	}
	if got := VersionMetadata(&ChartSource{ReconcileStrategy: "ChartVersion"}, "main@sha1:0123456789abcdef", 3); got != "" {
		t.Errorf("ChartVersion strategy without values files: %q", got)
	}
}
