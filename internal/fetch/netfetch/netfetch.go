// Package netfetch is package fetch's Net made of net/http and
// archive/tar: the HTTP GETs of files and charts' repository indexes, and
// the unpacking of charts' archives. It is apart from fetch because net
// and archive/tar (through os/user) link libc through cgo, which the lean
// kpipe binary leaves out; kpipe-full and the public API pass New(client)
// in fetch.Options.Net.
//
// It imports package fetch (for its Net and StatusError) and the
// standard library only.
package netfetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kpipe/kpipe/internal/fetch"
)

// New returns a fetch.Net that makes its requests with c; nil means
// http.DefaultClient.
func New(c *http.Client) fetch.Net {
	if c == nil {
		c = http.DefaultClient
	}
	return netFetch{c: c}
}

type netFetch struct{ c *http.Client }

// Get returns the body of a GET of url; a status other than 2xx is a
// *fetch.StatusError.
func (n netFetch) Get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := n.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &fetch.StatusError{URL: url, Code: resp.StatusCode, Text: http.StatusText(resp.StatusCode)}
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the response: %w", url, err)
	}
	return data, nil
}

// Untar unpacks a gzipped tar archive into dir: regular files and
// directories only, none outside dir.
func (netFetch) Untar(data []byte, dir string) error { return untar(data, dir) }

func untar(data []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.ReplaceAll(h.Name, "\\", "/"))
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("entry %q lies outside the archive", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
