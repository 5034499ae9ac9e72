package helmrelease

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// LocalChartOptions name a chart in a path source (a GitRepository or
// Bucket checked out or copied to a directory).
type LocalChartOptions struct {
	// Root is the source's directory; Chart the chart's path in it
	// (spec.chart), which may not leave it (symbolic links included).
	Root, Chart string
	// ValuesFiles (paths in the source) replace the chart's values.yaml
	// with their merge, as source-controller does; a missing one is an
	// error unless IgnoreMissingValuesFiles.
	ValuesFiles              []string
	IgnoreMissingValuesFiles bool
	// VersionMetadata is SemVer build metadata for the chart's version, as
	// source-controller adds it (see VersionMetadata); none when empty.
	VersionMetadata string
	// Dir is an empty directory a changed copy of the chart is written to
	// (when ValuesFiles or VersionMetadata change it).
	Dir string
}

// LocalChart returns the chart directory helm renders for a chart of a
// path source, as source-controller's local chart builder leaves it: the
// chart's own directory when nothing changes it, else a copy in Dir whose
// values.yaml is the merge of ValuesFiles (not merged with the chart's
// own values.yaml unless it is listed) and whose Chart.yaml version
// carries VersionMetadata. Chart dependencies are not built: a chart
// whose dependencies are not in its charts/ directory fails in helm.
func LocalChart(o LocalChartOptions) (string, error) {
	dir, err := secureJoin(o.Root, o.Chart)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", o.Chart, err)
	}
	if !st.IsDir() {
		if len(o.ValuesFiles) > 0 || o.VersionMetadata != "" {
			return "", fmt.Errorf("chart %s is packaged: replacing its values or version is not supported", o.Chart)
		}
		return dir, nil
	}
	chartYAML, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", fmt.Errorf("chart %s: %w", o.Chart, err)
	}
	var values map[string]any
	if len(o.ValuesFiles) > 0 {
		if values, err = mergeFileValues(o.Root, o.ValuesFiles, o.IgnoreMissingValuesFiles); err != nil {
			return "", err
		}
	}
	if values == nil && o.VersionMetadata == "" {
		return dir, nil
	}
	if o.Dir == "" {
		return "", errors.New("no directory to write the changed chart to")
	}
	out := filepath.Join(o.Dir, filepath.Base(dir))
	if err := copyTree(dir, out); err != nil {
		return "", fmt.Errorf("copying chart %s: %w", o.Chart, err)
	}
	if values != nil {
		var data []byte
		if len(values) > 0 {
			if data, err = yaml.Marshal(values); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(filepath.Join(out, "values.yaml"), data, 0o644); err != nil {
			return "", err
		}
	}
	if o.VersionMetadata != "" {
		var meta map[string]any
		if err := yaml.Unmarshal(chartYAML, &meta); err != nil {
			return "", fmt.Errorf("cannot load 'Chart.yaml': %w", err)
		}
		v, _ := meta["version"].(string)
		ver, err := semver.NewVersion(v)
		if err != nil {
			return "", fmt.Errorf("failed to parse version from chart metadata as SemVer: %w", err)
		}
		if *ver, err = ver.SetMetadata(o.VersionMetadata); err != nil {
			return "", fmt.Errorf("failed to set SemVer metadata on chart version: %w", err)
		}
		meta["version"] = ver.String()
		data, err := yaml.Marshal(meta)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(out, "Chart.yaml"), data, 0o644); err != nil {
			return "", err
		}
	}
	return out, nil
}

// VersionMetadata is the SemVer build metadata source-controller adds to
// the version of a chart built from a path source: the first 12 hex
// digits of the source revision's hash when the reconcile strategy is
// Revision (revision as Flux writes it: "main@sha1:<hex>", or a bare
// hash), then, when values files are set, "." and the HelmChart's
// metadata.generation (cluster state: pass 0 when unknown, and it is left
// out, which the caller should say).
func VersionMetadata(cs *ChartSource, revision string, generation int64) string {
	var meta string
	if cs.ReconcileStrategy == "Revision" && revision != "" {
		rev := revision
		if i := strings.LastIndexAny(rev, ":/"); i >= 0 {
			rev = rev[i+1:]
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		meta = rev
	}
	if len(cs.ValuesFiles) > 0 && generation > 0 {
		if meta != "" {
			meta += "."
		}
		meta += fmt.Sprint(generation)
	}
	return meta
}

// mergeFileValues is source-controller's: the values files (paths in
// root) merged in order.
func mergeFileValues(root string, paths []string, ignoreMissing bool) (map[string]any, error) {
	merged := map[string]any{}
	for _, p := range paths {
		secureP, err := secureJoin(root, p)
		if err != nil {
			return nil, err
		}
		f, err := os.Stat(secureP)
		switch {
		case err != nil:
			if ignoreMissing && os.IsNotExist(err) {
				continue
			}
			fallthrough
		case !f.Mode().IsRegular():
			return nil, fmt.Errorf("no values file found at path '%s' (reference '%s')", strings.TrimPrefix(secureP, root), p)
		}
		b, err := os.ReadFile(secureP)
		if err != nil {
			return nil, fmt.Errorf("could not read values from file '%s': %w", p, err)
		}
		values := map[string]any{}
		if err := yaml.Unmarshal(b, &values); err != nil {
			return nil, fmt.Errorf("unmarshaling values from '%s' failed: %w", p, err)
		}
		merged = MergeMaps(merged, values)
	}
	return merged, nil
}

// secureJoin joins p to root as github.com/cyphar/filepath-securejoin
// does: p and every symbolic link on the way are resolved as if root were
// the file system's root, so the result never leaves root.
func secureJoin(root, p string) (string, error) {
	root = filepath.Clean(root)
	var resolved string // below root, clean, "" for root itself
	rest := filepath.ToSlash(p)
	links := 0
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		switch part {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			if resolved == "." || resolved == string(filepath.Separator) {
				resolved = ""
			}
			continue
		}
		next := filepath.Join(resolved, part)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > 255 {
			return "", fmt.Errorf("securejoin %s %s: too many symbolic links", root, p)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		target = filepath.ToSlash(target)
		if strings.HasPrefix(target, "/") {
			resolved = ""
		}
		rest = target + "/" + rest
	}
	return filepath.Join(root, resolved), nil
}

// copyTree copies the directories and regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil
	})
}
