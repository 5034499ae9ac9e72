package app

import (
	"os"
)

// Env is the ARGOCD_APP_* environment the repo-server builds for a source
// (newEnv), in its order.
type Env []EnvEntry

// NewEnv builds the environment of one source: instance name,
// destination namespace, project, revision (full, 7 and 8 characters),
// the source's repoURL, path and targetRevision.
func NewEnv(instanceName, destNamespace, project, revision string, src *ApplicationSource) Env {
	short := func(n int) string {
		if len(revision) > n {
			return revision[:n]
		}
		return revision
	}
	return Env{
		{"ARGOCD_APP_NAME", instanceName},
		{"ARGOCD_APP_NAMESPACE", destNamespace},
		{"ARGOCD_APP_PROJECT_NAME", project},
		{"ARGOCD_APP_REVISION", revision},
		{"ARGOCD_APP_REVISION_SHORT", short(7)},
		{"ARGOCD_APP_REVISION_SHORT_8", short(8)},
		{"ARGOCD_APP_SOURCE_REPO_URL", src.RepoURL},
		{"ARGOCD_APP_SOURCE_PATH", src.Path},
		{"ARGOCD_APP_SOURCE_TARGET_REVISION", src.TargetRevision},
	}
}

// Environ is the NAME=value list handed to kustomize build and helm.
func (e Env) Environ() []string {
	var out []string
	for _, v := range e {
		if v.Name != "" || v.Value != "" {
			out = append(out, v.Name+"="+v.Value)
		}
	}
	return out
}

// Envsubst is Argo CD's Env.Envsubst: os.Expand over these variables only
// ($NAME and ${NAME}; an unknown name becomes empty; $$ becomes $).
func (e Env) Envsubst(s string) string {
	vals := map[string]string{}
	for _, v := range e {
		vals[v.Name] = v.Value
	}
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return vals[name]
	})
}
