package kpipe_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe"
)

// TestRemoteBaseThroughTheAPI: Build fetches a remote base into the
// Cache's directory; with Offline it builds from there, and without a
// Cache it fails naming the URL.
func TestRemoteBaseThroughTheAPI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed (apt-get install git)")
	}
	work, bare := t.TempDir(), filepath.Join(t.TempDir(), "repo.git")
	write := func(dir, name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(work, "base/kustomization.yaml", "resources:\n- cm.yaml\n")
	write(work, "base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"},
		{"clone", "-q", "--bare", ".", bare}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	url := "file://" + bare + "//base?ref=main"
	overlay := t.TempDir()
	write(overlay, "kustomization.yaml", "resources:\n- "+url+"\nnamePrefix: api-\n")

	ctx := context.Background()
	c, err := kpipe.OpenCache(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := kpipe.New(kpipe.Options{Cache: c}).Build(ctx, overlay)
	if err != nil || !strings.Contains(string(got), "name: api-cm") {
		t.Fatalf("Build: %v\n%s", err, got)
	}
	if _, err := os.Stat(filepath.Join(c.Dir(), "remote", "git")); err != nil {
		t.Errorf("the checkout is not kept in the cache's directory: %v", err)
	}
	if again, err := kpipe.New(kpipe.Options{Cache: c, Offline: true}).Build(ctx, overlay); err != nil || string(again) != string(got) {
		t.Errorf("offline Build: %v\n%s", err, again)
	}
	if _, err := kpipe.New(kpipe.Options{Offline: true}).Build(ctx, overlay); err == nil || !strings.Contains(err.Error(), "file://"+bare) {
		t.Errorf("offline Build without a cache: %v", err)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "kpipe-remote-*"))
	if direct, err := kpipe.New(kpipe.Options{}).Build(ctx, url); err != nil || !strings.Contains(string(direct), "name: cm") {
		t.Errorf("Build of the URL itself: %v\n%s", err, direct)
	}
	// Without a Cache, the checkout went to a temporary directory, removed.
	if after, _ := filepath.Glob(filepath.Join(os.TempDir(), "kpipe-remote-*")); len(after) != len(before) {
		t.Errorf("temporary checkouts left behind: %v (before: %v)", after, before)
	}

	// A Cache whose directory cannot be created (under a file) warns once
	// and builds as without a Cache, the checkout in a temporary
	// directory.
	file := filepath.Join(t.TempDir(), "file")
	write(filepath.Dir(file), "file", "")
	var warnings []string
	bad, err := kpipe.OpenCache(ctx, filepath.Join(file, "cache"), func(msg string) { warnings = append(warnings, msg) })
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if got2, err := kpipe.New(kpipe.Options{Cache: bad}).Build(ctx, overlay); err != nil || string(got2) != string(got) {
		t.Errorf("Build with a Cache that cannot be used: %v\n%s", err, got2)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "building without a cache") {
		t.Errorf("warnings = %q, want one saying the build goes on without a cache", warnings)
	}
	if after, _ := filepath.Glob(filepath.Join(os.TempDir(), "kpipe-remote-*")); len(after) != len(before) {
		t.Errorf("temporary checkouts left behind: %v (before: %v)", after, before)
	}
}
