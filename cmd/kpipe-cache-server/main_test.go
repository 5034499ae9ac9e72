package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kpipe/kpipe/cache/server/servertest"
)

// Mistakes in the arguments are usage errors (exit 2) that name the
// flag; a token file with a short token is refused (exit 1) without
// printing the token.
func TestArgumentErrors(t *testing.T) {
	short := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(short, []byte("short\n"), 0o600)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "--dir is required"},
		{[]string{"--dir", t.TempDir(), "--tls-cert", "x.pem"}, 2, "--tls-cert and --tls-key go together"},
		{[]string{"--dir", t.TempDir(), "--max-size", "lots"}, 2, `--max-size: invalid size "lots"`},
		{[]string{"--dir", t.TempDir(), "--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"--dir", t.TempDir(), "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--dir", t.TempDir(), "--read-token-file", short}, 1, "at least 16 characters"},
		{[]string{"--dir", t.TempDir(), "--listen", "127.0.0.1:notaport"}, 1, "--listen 127.0.0.1:notaport"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{name}, tc.args...), &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) || strings.Contains(errOut.String(), "short\n") {
			t.Errorf("%q: exit %d, %s", tc.args, code, errOut.String())
		}
	}
}

// The server starts on 127.0.0.1 by default, says who can connect in
// one line, and stops cleanly (exit 0) when its context ends.
func TestServesAndStops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	ctx, cancel := context.WithCancel(context.Background())
	errOut := &servertest.Buffer{}
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{name, "--dir", dir, "--listen", "127.0.0.1:0"}, &bytes.Buffer{}, errOut)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "on http://127.0.0.1:") {
		if time.Now().After(deadline) {
			t.Fatalf("no start-up line: %s", errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if l := errOut.String(); !strings.Contains(l, "no tokens: only this machine can connect") {
		t.Errorf("start-up: %q", l)
	}
	cancel()
	if code := <-done; code != 0 || !strings.Contains(errOut.String(), "stopped; the store is closed") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
