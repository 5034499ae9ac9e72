package genrepo

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteApplications writes n Argo CD Applications under dir/argocd/apps
// (one file each, app-NNN.yaml), named bench-NNN in namespace argocd,
// over the kustomize roots given (relative to dir, cycled), their source
// the repository repoURL: the shape of the Argo CD reference corpus's
// bench300, many Applications over shared bases. One Application in
// three sets Kustomize options (a name prefix and a label of its own), so
// that its root is edited while its bases stay shared; destination
// namespaces cycle over 17. It returns the files' paths relative to dir.
func WriteApplications(dir string, roots []string, n int, repoURL string) ([]string, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("no roots to write Applications for")
	}
	var out []string
	for i := 0; i < n; i++ {
		opts := ""
		if i%3 == 2 {
			opts = fmt.Sprintf("    kustomize:\n      namePrefix: b%d-\n      commonLabels:\n        bench: \"%d\"\n", i, i)
		}
		doc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: bench-%03[1]d
  namespace: argocd
spec:
  project: default
  source:
    repoURL: %[2]s
    path: %[3]s
    targetRevision: HEAD
%[4]s  destination:
    server: https://kubernetes.default.svc
    namespace: ns-%[5]d
`, i, repoURL, filepath.ToSlash(roots[i%len(roots)]), opts, i%17)
		rel := filepath.Join("argocd", "apps", fmt.Sprintf("app-%03d.yaml", i))
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}
