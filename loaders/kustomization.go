package loaders

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	yaml2 "go.yaml.in/yaml/v2"

	"github.com/kpipe/kpipe/internal/fsread"
	"github.com/kpipe/kpipe/internal/resyaml"
)

// The kinds and apiVersions a kustomization file may declare.
const (
	kindKustomization    = "Kustomization"
	KindComponent        = "Component"
	versionKustomization = "kustomize.config.k8s.io/v1beta1"
	versionComponent     = "kustomize.config.k8s.io/v1alpha1"
)

// FileNames are the names a kustomization file may have, in the order
// kustomize looks for them.
var FileNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// HasKustomization reports whether dir in fsys holds a kustomization file
// (a regular file, or a link to one, of one of FileNames).
func HasKustomization(fsys FS, dir string) bool {
	for _, name := range FileNames {
		if st, err := fsys.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

var unknownField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`json: unknown field "([^"]+)"$`) })

// MissingKustomizationError says a directory has no kustomization file.
type MissingKustomizationError struct{ Dir string }

func (e *MissingKustomizationError) Error() string {
	return fmt.Sprintf("unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '%s'", e.Dir)
}

// KustomizationFile is a kustomization file found and parsed.
type KustomizationFile struct {
	// Path is the file's absolute path, and Real that path with symlinks
	// resolved.
	Path, Real string
	// Size and Sum are the length and SHA-256 digest of the bytes read,
	// and Info the stat of the file taken before it was read. The bytes
	// themselves are not kept (K holds what the build needs of them; a
	// build of thousands of kustomizations kept each twice): Content reads
	// them again, for the hint of an error.
	Size int64
	Sum  [sha256.Size]byte
	Info os.FileInfo
	// K is the parsed, normalised kustomization.
	K *Kustomization
	// Warnings are the deprecation warnings kustomize prints for the file.
	Warnings []string
}

// FindKustomization looks for the kustomization file in dir (absolute and
// symlink-free) of fsys and parses it. Like any file a kustomization reads, the
// kustomization file itself must be a regular file no larger than
// fsread.MaxFileSize and, under RootOnly, must resolve to a path in or below
// dir: a kustomization.yaml that is a symlink to a file elsewhere is refused
// as kustomize refuses it.
func FindKustomization(fsys FS, dir string, r Restriction) (*KustomizationFile, error) {
	var found []string
	for _, name := range FileNames {
		p := filepath.Join(dir, name)
		if st, err := fsys.Stat(p); err != nil || st.IsDir() {
			continue
		}
		found = append(found, p)
	}
	switch len(found) {
	case 0:
		return nil, &MissingKustomizationError{Dir: dir}
	case 1:
	default:
		return nil, fmt.Errorf("Found multiple kustomization files under: %s\n(%s)", dir, strings.Join(found, ", "))
	}
	return readKustomization(fsys, dir, found[0], r)
}

// FindListedKustomization is FindKustomization for a directory whose
// listing, read just before, shows name, one of FileNames, as a regular
// file, and no other of FileNames in any case (build-all's discovery
// lists every directory it loads): the names are not looked for again.
func FindListedKustomization(fsys FS, dir, name string, r Restriction) (*KustomizationFile, error) {
	return readKustomization(fsys, dir, filepath.Join(dir, name), r)
}

// readKustomization reads and parses the kustomization file at path, in
// dir.
func readKustomization(fsys FS, dir, path string, r Restriction) (*KustomizationFile, error) {
	ldr := &Loader{fs: fsys, root: dir, restriction: r}
	data, real, info, err := ldr.ReadFileStat(filepath.Base(path))
	if err != nil {
		return nil, &Hinted{Hint: unreadableKustomizationHint(fsys, path, real, dir, err), Err: err}
	}
	k, warnings, err := parseKustomization(data)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
		if m := unknownField().FindStringSubmatch(err.Error()); m != nil {
			err = &Hinted{Hint: unknownFieldHint(path, data, m[1]), Err: err}
		}
		return nil, err
	}
	if errs := k.enforceFields(); len(errs) > 0 {
		return nil, &Hinted{Hint: fmt.Sprintf("%s: %s", path, strings.Join(errs, "; ")),
			Err: fmt.Errorf("Failed to read kustomization file under %s:\n%s", dir, strings.Join(errs, "\n"))}
	}
	return &KustomizationFile{Path: path, Real: real, Size: int64(len(data)), Sum: sha256.Sum256(data), Info: info, K: k, Warnings: warnings}, nil
}

// Content reads the file again (nil if it cannot be read now), for a
// hint that quotes it: it may have changed since it was parsed.
func (f *KustomizationFile) Content(fsys FS) []byte {
	data, _, err := fsys.ReadFile(f.Real, false)
	if err != nil {
		return nil
	}
	return data
}

// unreadableKustomizationHint is the plain line for a kustomization file
// at path (in dir) that could not be read: what it is (a symlink and its
// target, a device) and why that cannot be read. real is where it
// resolved to, when known.
func unreadableKustomizationHint(fsys FS, path, real, dir string, err error) string {
	is := "is"
	if target, lerr := fsys.Readlink(path); lerr == nil {
		is = "is a symlink to " + target + ","
	}
	switch {
	case strings.HasPrefix(err.Error(), "security; "):
		return fmt.Sprintf("%s: the kustomization file %s outside the kustomization's directory %s; kpipe reads nothing outside it unless --load-restrictor LoadRestrictionsNone", path, is, dir)
	case errors.Is(err, fsread.ErrNotRegular):
		var pe *fs.PathError
		why := err.Error()
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
		if is != "is" {
			return fmt.Sprintf("%s: the kustomization file %s which is %s", path, is, why)
		}
		return fmt.Sprintf("%s: the kustomization file is %s", path, why)
	default:
		return fmt.Sprintf("%s: cannot read the kustomization file: %v", path, err)
	}
}

// parseKustomization strictly decodes a kustomization file: an unknown field
// or a value of the wrong type is an error naming the field. Like kustomize
// it reads the file as YAML 1.1 (so `yes` is a boolean), matches keys
// without regard to case, and then applies kustomize's normalisation (default
// kind and apiVersion, bases into resources, imageTags into images, env into
// envs, helmChartInflationGenerator into helmCharts).
func parseKustomization(data []byte) (*Kustomization, []string, error) {
	tree, err := yamlTree(data)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid Kustomization: %w", err)
	}
	var k Kustomization
	if !decodeTree(tree, &k) {
		// The way kustomize goes, which words the errors (decode.go).
		k = Kustomization{}
		if err := decodeJSON(tree, &k); err != nil {
			return nil, nil, fmt.Errorf("invalid Kustomization: %w", err)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		if g.Type != "" {
			return nil, nil, fmt.Errorf("invalid Kustomization: json: unknown field \"type\" in configMapGenerator %q", g.Name)
		}
	}
	warnings := k.deprecationWarnings()
	k.normalize()
	if k.emptyButKind() {
		return nil, nil, fmt.Errorf("kustomization.yaml is empty")
	}
	return &k, warnings, nil
}

// emptyButKind reports whether k sets nothing but its kind and
// apiVersion (as reflect.DeepEqual with a Kustomization holding only
// those would, without the two copies of the large struct that passing
// them by value made: a tenth of parsing a kustomization).
func (k *Kustomization) emptyButKind() bool {
	kind, api := k.Kind, k.APIVersion
	k.Kind, k.APIVersion = "", ""
	empty := reflect.ValueOf(k).Elem().IsZero()
	k.Kind, k.APIVersion = kind, api
	return empty
}

// YAMLToJSON converts YAML (read as YAML 1.1, as kustomize reads its own
// config files) to JSON, spelling non-string map keys as sigs.k8s.io/yaml
// does.
func YAMLToJSON(data []byte) ([]byte, error) {
	tree, err := yamlTree(data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(tree)
}

// decodeJSON decodes tree into *k as kustomize decodes a kustomization:
// written as JSON, read back strictly (an unknown field is an error).
func decodeJSON(tree any, k *Kustomization) error {
	j, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(k)
}

// yamlTree reads data as YAMLToJSON does, into a tree encoding/json
// accepts (jsonCompatible).
func yamlTree(data []byte) (any, error) {
	var tree any
	text := string(data)
	// Most files are in the block style resyaml.FastDecodeV2 reads
	// without building yaml.v2's tree (a fifth of a cold build's
	// allocations went to parsing kustomizations); anything else, and
	// every error, is yaml.v2's.
	if t, ok := resyaml.FastDecodeV2(text); ok {
		tree = t
	} else if err := yaml2.Unmarshal(data, &tree); err != nil {
		return nil, err
	}
	return jsonCompatible(tree)
}

// DecodeConfig decodes a YAML config into v leniently, as kustomize decodes
// builtin plugin configs: unknown fields are ignored and keys match without
// regard to case.
func DecodeConfig(data []byte, v any) error {
	j, err := YAMLToJSON(data)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, v)
}

// jsonCompatible turns a yaml.v2 tree into one encoding/json accepts: map
// keys become strings the way sigs.k8s.io/yaml spells them.
func jsonCompatible(v any) (any, error) {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			var key string
			switch kk := k.(type) {
			case string:
				key = kk
			case int:
				key = strconv.Itoa(kk)
			case int64:
				key = strconv.FormatInt(kk, 10)
			case uint64:
				key = strconv.FormatUint(kk, 10)
			case float64:
				key = strconv.FormatFloat(kk, 'g', -1, 64)
			case bool:
				key = strconv.FormatBool(kk)
			case nil:
				key = "null"
			default:
				return nil, fmt.Errorf("unsupported map key %#v", k)
			}
			c, err := jsonCompatible(val)
			if err != nil {
				return nil, err
			}
			m[key] = c
		}
		return m, nil
	case map[string]any:
		// resyaml.FastDecodeV2's tree, which is the caller's: converted in
		// place.
		for k, val := range t {
			c, err := jsonCompatible(val)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return strconv.FormatFloat(t, 'g', -1, 64), nil
		}
	}
	return v, nil
}

const editFix = "Run 'kustomize edit fix' to update your Kustomization automatically."

func (k *Kustomization) deprecationWarnings() []string {
	var w []string
	add := func(set bool, field, instead, fix string) {
		if set {
			w = append(w, fmt.Sprintf("# Warning: '%s' is deprecated. Please use '%s' instead. %s", field, instead, fix))
		}
	}
	add(k.Bases != nil, "bases", "resources", editFix)
	add(k.CommonLabels != nil, "commonLabels", "labels", editFix)
	add(k.ImageTags != nil, "imageTags", "images", editFix)
	add(k.PatchesJson6902 != nil, "patchesJson6902", "patches", editFix)
	add(k.PatchesStrategicMerge != nil, "patchesStrategicMerge", "patches", editFix)
	add(k.Vars != nil, "vars", "replacements", "[EXPERIMENTAL] "+editFix)
	return w
}

func (k *Kustomization) normalize() {
	if k.Kind == "" {
		k.Kind = kindKustomization
	}
	if k.APIVersion == "" {
		if k.Kind == KindComponent {
			k.APIVersion = versionComponent
		} else {
			k.APIVersion = versionKustomization
		}
	}
	k.Resources = append(k.Resources, k.Bases...)
	k.Bases = nil
	k.Images = append(k.Images, k.ImageTags...)
	k.ImageTags = nil
	// Entries of the deprecated helmChartInflationGenerator become
	// helmCharts, as kustomize converts them: the first entry's chartHome
	// and helmHome become helmGlobals when there are none, and
	// releaseNamespace, extraArgs, helmBin and chartRepoName are dropped.
	for _, a := range k.HelmChartInflationGenerator {
		if k.HelmGlobals == nil {
			k.HelmGlobals = &HelmGlobals{ChartHome: a.ChartHome, ConfigHome: a.HelmHome}
		}
		k.HelmCharts = append(k.HelmCharts, HelmChart{Name: a.ChartName, Version: a.ChartVersion, Repo: a.ChartRepoURL,
			ValuesFile: a.Values, ValuesInline: a.ValuesLocal, ValuesMerge: a.ValuesMerge, ReleaseName: a.ReleaseName})
	}
	k.HelmChartInflationGenerator = nil
	for _, gens := range [][]GeneratorArgs{k.ConfigMapGenerator, k.SecretGenerator} {
		for i := range gens {
			if gens[i].Env != "" {
				gens[i].Envs = append(gens[i].Envs, gens[i].Env)
				gens[i].Env = ""
			}
		}
	}
}

func (k *Kustomization) enforceFields() []string {
	var errs []string
	if k.Kind != kindKustomization && k.Kind != KindComponent {
		errs = append(errs, "kind should be Kustomization or Component")
	}
	want := versionKustomization
	if k.Kind == KindComponent {
		want = versionComponent
	}
	if k.APIVersion != want {
		errs = append(errs, "apiVersion for "+k.Kind+" should be "+want)
	}
	return errs
}
