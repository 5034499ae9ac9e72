package argocdtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/generate"
	"github.com/kpipe/kpipe/internal/argocd/helm"
)

// Tools returns kpipe's pinned kustomize v5.8.2 and helm v3.10.2, or
// skips t naming the install step.
func Tools(t testing.TB) (kustomize, helmBin string) {
	home, _ := os.UserHomeDir()
	k := filepath.Join(home, ".cache/kpipe-ci/kustomize-v5.8.2/kustomize")
	h := filepath.Join(home, ".cache/kpipe-ci/helm-v3.10.2/helm")
	for _, p := range []string{k, h} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s missing: run .ci/run once (it installs kustomize v5.8.2 and helm v3.10.2 under ~/.cache/kpipe-ci)", p)
		}
	}
	return k, h
}

// Processes is a generate.Renderer running kustomize and helm as
// processes: the stand-in for kpipe's engine until phase 2. The checkouts
// must be Disk trees named "<path to cached source>" (Case.Checkout).
type Processes struct {
	KustomizeBin, HelmBin string
	Tmp                   string
}

func dir(co app.Checkout) string { return co.FS.(Disk).Dir }

// Kustomize runs kustomize build, on a hard-linked copy of the checkout
// holding the edited kustomization file when there is one.
func (p *Processes) Kustomize(ctx context.Context, b *generate.KustomizeBuild) ([]byte, error) {
	root := dir(b.Checkout)
	if b.Edit != nil && b.Edit.Data != nil {
		tmp, err := os.MkdirTemp(p.Tmp, "co-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := linkTree(root, tmp); err != nil {
			return nil, err
		}
		f := filepath.Join(tmp, filepath.FromSlash(b.Edit.File))
		os.Remove(f)
		if err := os.WriteFile(f, b.Edit.Data, 0o644); err != nil {
			return nil, err
		}
		root = tmp
	}
	args := append([]string{}, b.Args...)
	args[1] = filepath.Join(root, filepath.FromSlash(b.AppDir))
	cmd := exec.CommandContext(ctx, p.KustomizeBin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), b.Env...)
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(p.HelmBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return run(cmd, map[string]string{root: b.Checkout.Root})
}

// Helm runs helm template in the app directory, with fresh helm homes.
func (p *Processes) Helm(ctx context.Context, h *generate.HelmTemplate) ([]byte, error) {
	root := dir(h.Checkout)
	home, err := os.MkdirTemp(p.Tmp, "helm")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	real := map[string]string{} // shown -> real
	labels := map[string]string{root: h.Checkout.Root}
	for _, f := range append(append([]helm.File{}, h.Template.ValueFiles...), h.Template.SetFiles...) {
		if f.URL == "" {
			d := dir(f.Checkout)
			real[f.String()] = filepath.Join(d, filepath.FromSlash(f.Path))
			labels[d] = f.Checkout.Root
		}
	}
	var args []string
	for _, a := range h.Template.Args {
		if a == helm.ValuesPlaceholder {
			f := filepath.Join(home, "values.yaml")
			if err := os.WriteFile(f, h.Template.Values, 0o644); err != nil {
				return nil, err
			}
			a = f
			labels[f] = "<temp values file>"
		} else if k, v, ok := strings.Cut(a, "="); ok && real[v] != "" {
			a = k + "=" + real[v]
		} else if real[a] != "" {
			a = real[a]
		}
		args = append(args, a)
	}
	cmd := exec.CommandContext(ctx, p.HelmBin, args...)
	cmd.Dir = filepath.Join(root, filepath.FromSlash(h.AppDir))
	cmd.Env = append(os.Environ(), h.Env...)
	cmd.Env = append(cmd.Env, "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	return run(cmd, labels)
}

// run runs cmd; a failure is a *generate.CommandError with the real
// directories in its output replaced by their labels.
func run(cmd *exec.Cmd, labels map[string]string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, err
		}
		msg := stderr.String()
		for d, l := range labels {
			msg = strings.ReplaceAll(msg, d, l)
		}
		return nil, &generate.CommandError{Cause: err.Error(), Stderr: msg}
	}
	return stdout.Bytes(), nil
}

// linkTree mirrors src into dst with hard links (copies where linking
// fails), without .git, keeping symlinks.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && rel == ".git" {
			return filepath.SkipDir
		}
		t := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, t)
		case d.IsDir():
			return os.MkdirAll(t, 0o755)
		case d.Type().IsRegular():
			if os.Link(p, t) == nil {
				return nil
			}
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.Create(t)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil
	})
}
