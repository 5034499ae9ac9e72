package flux

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sync"
)

// DefaultNamespace is flux's -n default.
const DefaultNamespace = "flux-system"

// Args are the arguments of `flux build kustomization NAME` that decide
// whether it builds at all.
type Args struct {
	// Name is NAME ("" when missing).
	Name string
	// Path is --path as given.
	Path string
	// KustomizationFile is --kustomization-file as given.
	KustomizationFile string
	// Namespace is -n (DefaultNamespace unless set).
	Namespace string
	// DryRun is --dry-run.
	DryRun bool
}

// ErrLive is kpipe's refusal of a build without --dry-run: flux reads the
// Flux Kustomization (and substituteFrom) from a cluster then; kpipe
// reads no cluster.
var ErrLive = errors.New("kpipe flux builds offline: add --dry-run (the Flux Kustomization is read from --kustomization-file, spec.postBuild.substituteFrom is not resolved)")

// dnsLabel is a DNS-1123 label.
var dnsLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`) })

// Check refuses as flux build kustomization refuses before building, in
// its order and with its messages (without flux's "✗ "): an invalid
// namespace, no NAME, an empty --path, a --path that is not a directory
// (named absolute), --dry-run without --kustomization-file, a
// --kustomization-file that does not exist or is a directory (named as
// given); then, without --dry-run, ErrLive. Relative paths are taken from
// cwd. It returns --path made absolute and clean, as flux uses it.
func (a Args) Check(fsys FS, cwd string) (string, error) {
	if !IsDNSLabel(a.Namespace) {
		return "", fmt.Errorf("namespace must be a valid DNS label: %q", a.Namespace)
	}
	if a.Name == "" {
		return "", errors.New("kustomization name is required")
	}
	if a.Path == "" {
		return "", fmt.Errorf("invalid resource path %q", a.Path)
	}
	path := filepath.Clean(abs(cwd, a.Path))
	if fi, err := fsys.Stat(path); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("invalid resource path %q", path)
	}
	if a.DryRun && a.KustomizationFile == "" {
		return "", errors.New("dry-run mode requires a kustomization file")
	}
	if a.KustomizationFile != "" {
		if fi, err := fsys.Stat(abs(cwd, a.KustomizationFile)); err != nil || fi.IsDir() {
			return "", fmt.Errorf("invalid kustomization file %q", a.KustomizationFile)
		}
	}
	if !a.DryRun {
		return "", ErrLive
	}
	return path, nil
}

func abs(cwd, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}

// IsDNSLabel reports whether s is a DNS-1123 label, as flux requires of a
// namespace.
func IsDNSLabel(s string) bool { return len(s) <= 63 && dnsLabel().MatchString(s) }
