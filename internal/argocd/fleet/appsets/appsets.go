// Package appsets expands Argo CD ApplicationSets into fleet's units: the
// fleet.Expander kpipe-full and embedders pass in DiscoverOptions. It is a
// package of its own because Argo CD's goTemplate needs sprig (and with it
// net and semver), which the kpipe binary leaves out for its start-up's
// sake (internal/cli).
//
// It imports internal/argocd/app, internal/argocd/appset and
// internal/argocd/fleet.
package appsets

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kpipe/kpipe/internal/argocd/app"
	"github.com/kpipe/kpipe/internal/argocd/appset"
	"github.com/kpipe/kpipe/internal/argocd/fleet"
)

var _ fleet.Expander = Expand

// notLocal is a repository the ApplicationSet's git generator names that
// is not this one.
type notLocal struct{ url string }

func (e *notLocal) Error() string {
	return "no local checkout for " + e.url + " (repository " + e.url + " is not this repository)"
}

// Expand expands the ApplicationSet f into one unit per Application its
// generators make (a fleet.Expander): Argo CD's generators and templates
// (package appset). A git generator naming another repository, or a
// generator that needs a cluster or the network, makes a skipped unit.
func Expand(o fleet.DiscoverOptions, f app.Found, ns string, tracked func() ([]string, error)) []fleet.Unit {
	name := "applicationset/" + f.Name
	as, err := appset.Parse(f.JSON)
	if err != nil {
		return []fleet.Unit{{Name: name, File: f.Path, Set: f.Name, Err: fmt.Sprintf("%s: %v", f.Path, err)}}
	}
	repos := func(url string) (appset.Repo, error) {
		if !o.Repos.Local(url) {
			return nil, &notLocal{url}
		}
		files, err := tracked()
		if err != nil {
			return nil, err
		}
		return &appset.LocalRepo{URL: url, FS: o.Tree, Tracked: files, IncludeHidden: o.IncludeHiddenDirectories, NewGlobbing: o.NewGitFileGlobbing}, nil
	}
	res := appset.Generate(as, repos, ns)
	if res.Err != nil {
		u := fleet.Unit{Name: name, File: f.Path, Set: f.Name}
		var nl *notLocal
		var rf *appset.RefusedError
		switch {
		case errors.As(res.Err, &nl):
			u.Skipped = "ApplicationSet " + f.Name + ": repository " + nl.url + " is not this repository"
		case errors.As(res.Err, &rf):
			u.Skipped = "ApplicationSet " + f.Name + ": the " + rf.Name + " generator needs a cluster or the network"
		default:
			u.Err = fmt.Sprintf("%s: ApplicationSet %s: %v", f.Path, f.Name, res.Err)
		}
		return []fleet.Unit{u}
	}
	var out []fleet.Unit
	for i := range res.Applications {
		out = append(out, fleet.UnitOf(&res.Applications[i], f.Path, f.Name, ns, o.Repos))
	}
	for _, k := range slices.Sorted(maps.Keys(res.Invalid)) {
		out = append(out, fleet.Unit{Name: "applicationset/" + f.Name + "/" + k, File: f.Path, Set: f.Name, Err: res.Invalid[k]})
	}
	return out
}
