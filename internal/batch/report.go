package batch

import (
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/internal/engine"
)

// RootReport is one root's entry in the report.
type RootReport struct {
	Path        string  `json:"path"`
	Output      string  `json:"output,omitempty"`
	Status      string  `json:"status"` // "ok" or "error"
	Error       string  `json:"error,omitempty"`
	Digest      string  `json:"digest,omitempty"` // sha256 of the output
	Changed     bool    `json:"changed"`          // output differs from the file under the output directory, or without one from the previous report's (Options.Previous) or the last build's
	Seconds     float64 `json:"seconds"`          // this root's own finishing, rendering and writing
	Cached      bool    `json:"cached"`           // final output taken from the cache
	UpToDate    bool    `json:"upToDate"`         // inputs unchanged since the last run: not loaded at all
	NodesBuilt  int     `json:"nodesBuilt"`
	NodesCached int     `json:"nodesCached"`
	StageHits   int     `json:"stageHits"`
	StageMisses int     `json:"stageMisses"`
	// RemovedOutput says a failing root's previous output file (one a
	// run wrote) was deleted, so that no stale output stays behind.
	RemovedOutput bool `json:"removedOutput,omitempty"`
	// Hint is, for a failing root, the plain line for a person that the
	// error carries (file:line, what is wrong, what was meant), when it
	// has one (loaders.Hinted); Error keeps kustomize's wording.
	Hint string `json:"hint,omitempty"`
	// OutOfDate says, with Options.Check, that the file under the output
	// directory is missing or differs from the root's output.
	OutOfDate bool `json:"outOfDate,omitempty"`
	// Reads is what the root's output depends on (Options.Reads).
	Reads *engine.ReadSet `json:"-"`
	// Warnings are the warnings of the kustomization files the root
	// includes (deprecated fields), when this run loaded it (a root up to
	// date is not loaded, and has none).
	Warnings []Warning `json:"warnings,omitempty"`
	// Source and Skipped are for units that are not kustomization roots
	// (`kpipe argocd build-all`: Applications, by name): the file that
	// defines the unit, and, with Status "skipped", why it is not built.
	Source  string `json:"source,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// Warning is one warning of a kustomization file.
type Warning struct {
	// File is the kustomization file (absolute in a Report that Run
	// returns; the CLI writes it relative to the current directory).
	File string `json:"file"`
	// Message is the warning, in kustomize's words without its "#
	// Warning: " lead.
	Message string `json:"message"`
}

// WarningOf is w as a report carries it.
func WarningOf(w engine.Warning) Warning {
	return Warning{File: w.File, Message: strings.TrimPrefix(w.Text, "# Warning: ")}
}

// Warnings returns the warnings of rep's roots, each file's once, in the
// order of the roots (the report's order, which is path order).
func (rep *Report) Warnings() []Warning {
	var out []Warning
	seen := map[string]bool{}
	for _, rr := range rep.Roots {
		given := map[string]bool{} // files of this root
		for _, w := range rr.Warnings {
			if seen[w.File] && !given[w.File] {
				continue
			}
			seen[w.File], given[w.File] = true, true
			out = append(out, w)
		}
	}
	return out
}

// Report is the outcome of a run (the --report file).
type Report struct {
	Version string `json:"version"`
	// Shard is "i/n" for a run with --shard i/n (MergeReports joins the
	// shards' reports).
	Shard string       `json:"shard,omitempty"`
	Roots []RootReport `json:"roots"`
	// Pruned are the outputs deleted because their roots no longer
	// exist; Kept are outputs of removed roots left in place because
	// their content is no longer what kpipe wrote.
	Pruned []string `json:"pruned,omitempty"`
	Kept   []string `json:"keptModified,omitempty"`
	// Orphans are, with Options.Check, the .yaml files under the output
	// directory (relative to it, with slashes) that no root renders.
	Orphans []string `json:"orphans,omitempty"`
	// Explain are the nodes built or taken from the cache, and why each
	// was built (Engine.Explain); roots up to date are not loaded and have
	// none (their report entry says upToDate).
	Explain []engine.NodeExplain `json:"explain,omitempty"`
	Summary struct {
		Roots       int                          `json:"roots"`
		Failed      int                          `json:"failed"`
		OutOfDate   int                          `json:"outOfDate,omitempty"`
		Changed     int                          `json:"changed"`
		UpToDate    int                          `json:"upToDate"`
		Seconds     float64                      `json:"seconds"`
		NodesBuilt  int                          `json:"nodesBuilt"`
		NodesCached int                          `json:"nodesCached"`
		RootsCached int                          `json:"rootsCached"`
		Stages      map[string]engine.StageStats `json:"stages"`
		FilesHashed int                          `json:"filesHashed"`
		FilesStat   int                          `json:"filesFromIndex"`
		// Remote counts the use of the remote cache, when there is one
		// (its uploads finished before the report was made).
		Remote *cache.RemoteStats `json:"remote,omitempty"`
	} `json:"summary"`
}

// Errors are the roots' errors, each prefixed with its root.
func (r *Report) Errors() []error {
	var errs []error
	for _, rr := range r.Roots {
		if rr.Status == "error" {
			errs = append(errs, fmt.Errorf("%s: %s", rr.Path, rr.Error))
		}
	}
	return errs
}
