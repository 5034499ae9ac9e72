package fetch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without a Net, a chart that must be pulled fails with ErrNoNet before
// helm runs, while a kept chart of an exact version is still used.
func TestChartWithoutNet(t *testing.T) {
	dir := t.TempDir()
	f := New(Options{Dir: dir})
	r := ChartRequest{Helm: filepath.Join(dir, "no-helm"), Repo: "https://charts.example.com", Name: "hello", Version: "1.2.3"}
	_, err := f.Chart(context.Background(), r)
	if !errors.Is(err, ErrNoNet) || !strings.Contains(err.Error(), "chart hello version \"1.2.3\" from https://charts.example.com") {
		t.Fatalf("pulling without a Net: %v", err)
	}

	// Keep the chart as a pull would have.
	key := strings.Join([]string{r.Repo, r.Name, r.Version, fmt.Sprint(r.Devel)}, "\x00")
	kept := filepath.Join(dir, "charts", hashName(key))
	chartYAML := filepath.Join(kept, "chart", "hello-1.2.3", "hello", "Chart.yaml")
	if err := os.MkdirAll(filepath.Dir(chartYAML), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(chartYAML, []byte("name: hello\nversion: 1.2.3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tree, err := treeDigest(filepath.Join(kept, "chart"))
	if err != nil {
		t.Fatal(err)
	}
	record := "archive sha256:" + strings.Repeat("a", 64) + "\ntree sha256:" + tree + "\n"
	if err := os.WriteFile(filepath.Join(kept, chartDigestFile), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	home, err := New(Options{Dir: dir}).Chart(context.Background(), r)
	if err != nil || home != filepath.Join(kept, "chart") {
		t.Fatalf("kept chart without a Net: %q, %v", home, err)
	}

	// A kept chart whose files changed must be pulled again: no Net, no chart.
	if err := os.WriteFile(chartYAML, []byte("name: hello\nversion: 9.9.9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Dir: dir}).Chart(context.Background(), r); !errors.Is(err, ErrNoNet) {
		t.Fatalf("changed kept chart without a Net: %v", err)
	}
}
