package flux

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/flux/postbuild"
)

// Group is the API group of Flux Kustomizations.
const Group = "kustomize.toolkit.fluxcd.io"

// KindKustomization is their kind.
const KindKustomization = "Kustomization"

// FS is the read-only view of a tree that Flux rendering reads: absolute
// paths in the operating system's form, and the os package's errors
// (*fs.PathError naming the path as given). loaders.FS (loaders.Disk, a
// tree in memory, a git revision) is one.
type FS interface {
	// Stat returns what is at path, following symlinks.
	Stat(path string) (fs.FileInfo, error)
	// Lstat returns what is at path; a final symlink is not followed.
	Lstat(path string) (fs.FileInfo, error)
	// ReadFile reads the regular file at path (following a final symlink
	// when follow is true) and returns its stat.
	ReadFile(path string, follow bool) ([]byte, fs.FileInfo, error)
	// ReadDir returns the stat of the directory at path and its entries,
	// in no particular order.
	ReadDir(path string) (fs.FileInfo, []fs.DirEntry, error)
}

// IsFluxKustomization reports whether apiVersion and kind are those of a
// Flux Kustomization, of any version (flux build reads v1beta2 objects
// into v1's type, dropping what v1 lacks).
func IsFluxKustomization(apiVersion, kind string) bool {
	return strings.HasPrefix(apiVersion, Group+"/") && kind == KindKustomization
}

// Find returns the Flux Kustomization named name in a --kustomization-file
// (data; file is its name as the user gave it, for the messages), as flux
// build finds it: the first document that is a Flux Kustomization named
// name whose namespace is namespace or empty. Every document before it must
// decode as a Flux Kustomization (most kinds do, unknown fields being
// dropped); the first that does not stops the search. The errors are
// flux's, without its "✗ " prefix.
func Find(data []byte, file, name, namespace string) (*Kustomization, error) {
	d := newDecoder(data)
	for {
		k, err := d.next()
		if err == io.EOF {
			return nil, fmt.Errorf("failed to get kustomization object: failed find kustomization with name '%s' and namespace '%s' in file '%s'", name, namespace, file)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to get kustomization object: failed to unmarshall kustomization file %s: %w", file, err)
		}
		if IsFluxKustomization(k.APIVersion, k.Kind) && k.Name == name && (k.Namespace == namespace || k.Namespace == "") {
			return k, nil
		}
	}
}

// Decode returns every Flux Kustomization of a YAML (or JSON) stream, in
// order, each decoded as Find decodes the one it finds. Documents of
// other kinds are skipped without being typed against the Flux schema; a
// document that is not YAML at all is an error.
func Decode(data []byte) ([]*Kustomization, error) {
	d := newDecoder(data)
	if d.json {
		// A JSON stream: every object must decode (flux's own reading).
		var out []*Kustomization
		for {
			k, err := d.next()
			if err == io.EOF {
				return out, nil
			}
			var syntax *jsonSyntaxError
			if errors.As(err, &syntax) || (err != nil && strings.HasPrefix(err.Error(), "error converting YAML to JSON")) {
				return nil, &NotYAMLError{Err: err}
			}
			if err != nil {
				return nil, err
			}
			if IsFluxKustomization(k.APIVersion, k.Kind) {
				out = append(out, k)
			}
		}
	}
	var out []*Kustomization
	for {
		doc, err := d.readYAMLDocument()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, &NotYAMLError{Err: err}
		}
		var tm TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			if strings.HasPrefix(err.Error(), "error converting YAML to JSON") {
				return nil, &NotYAMLError{Err: err}
			}
			continue // a kind or an apiVersion that is not a string
		}
		if !IsFluxKustomization(tm.APIVersion, tm.Kind) {
			continue
		}
		k := &Kustomization{}
		if err := yaml.Unmarshal(doc, k); err != nil {
			return nil, fluxTypeError(err)
		}
		out = append(out, k)
	}
}

// NotYAMLError is Decode's error for a stream that is not YAML.
type NotYAMLError struct{ Err error }

func (e *NotYAMLError) Error() string { return e.Err.Error() }
func (e *NotYAMLError) Unwrap() error { return e.Err }

// Object is a Flux Kustomization found in a tree: the object, the file it
// came from and its position among the file's Flux Kustomizations.
type Object struct {
	*Kustomization
	File  string
	Index int
}

// Discover returns the Flux Kustomizations of the YAML files (.yaml,
// .yml) under dir, walking it in lexical order without following
// symlinked directories and skipping directories named .git. A file that
// is not YAML is skipped; a Flux Kustomization that does not decode is an
// error naming its file.
func Discover(fsys FS, dir string) ([]Object, error) {
	var out []Object
	var walk func(d string) error
	walk = func(d string) error {
		_, entries, err := fsys.ReadDir(d)
		if err != nil {
			return err
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			if e.IsDir() {
				if e.Name() == ".git" {
					continue
				}
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
				continue
			}
			data, _, err := fsys.ReadFile(p, true)
			if err != nil {
				continue // a broken symlink, a FIFO: not configuration
			}
			ks, err := Decode(data)
			var notYAML *NotYAMLError
			if errors.As(err, &notYAML) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			for i, k := range ks {
				out = append(out, Object{Kustomization: k, File: p, Index: i})
			}
		}
		return nil
	}
	if err := walk(filepath.Clean(dir)); err != nil {
		return nil, err
	}
	return out, nil
}

// PostBuild returns the post-build options of k: the owner labels' values,
// spec.postBuild's variables (from holds the data of the ConfigMaps and
// Secrets spec.postBuild.substituteFrom names, in order, as the caller
// resolved them; nil with --dry-run, which never reads them), the strategy
// and spec.commonMetadata.
func (k *Kustomization) PostBuild(from []map[string]string, strict bool) postbuild.Options {
	o := postbuild.Options{Name: k.Name, Namespace: k.Namespace, Strict: strict}
	if pb := k.Spec.PostBuild; pb != nil {
		o.PostBuild = true
		o.Vars = postbuild.Variables(from, pb.Substitute)
		o.Always = pb.SubstituteStrategy == SubstituteStrategyAlways
	}
	if cm := k.Spec.CommonMetadata; cm != nil {
		o.CommonLabels, o.CommonAnnotations = cm.Labels, cm.Annotations
		if o.CommonLabels == nil {
			o.CommonLabels = map[string]string{}
		}
	}
	return o
}

// FromObject converts an object of a build's output (a Flux Kustomization
// another one rendered, after its post-build steps) into a Kustomization,
// as flux build --recursive converts the children it builds.
func FromObject(obj map[string]any) (*Kustomization, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert to kustomization: %w", err)
	}
	return FromJSON(b)
}

// FromJSON is FromObject of the object whose json.Marshal is b (what a
// record of a rendering keeps of the Flux Kustomizations it holds),
// without decoding it into a map and encoding it again.
func FromJSON(b []byte) (*Kustomization, error) {
	k := &Kustomization{}
	if err := json.Unmarshal(b, k); err != nil {
		return nil, fmt.Errorf("failed to convert to kustomization: %w", fluxTypeError(err))
	}
	return k, nil
}

// LocalPath is where flux build --recursive builds k: its source looked
// up in --local-sources (keys Kind/Namespace/Name, the namespace
// defaulting to k's own), joined with spec.path. The path is relative to
// the working directory when the source's is; it is not checked.
func (k *Kustomization) LocalPath(localSources map[string]string) (string, error) {
	ref := k.Spec.SourceRef
	if ref.Namespace == "" {
		ref.Namespace = k.Namespace
	}
	dir, ok := localSources[ref.String()]
	if !ok {
		return "", fmt.Errorf("cannot get local path for %s of kustomization %s", ref.String(), k.Name)
	}
	return filepath.Join(dir, k.Spec.Path), nil
}
