package fnrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/output"
	"github.com/kpipe/kpipe/internal/procgroup"
	"github.com/kpipe/kpipe/internal/resyaml"
	"github.com/kpipe/kpipe/resource"
	"github.com/kpipe/kpipe/stages/smp"
)

// Environment variables Wrap reads and sets.
const (
	// FunctionConfigEnv holds the functionConfig as YAML.
	FunctionConfigEnv = "KUST_FUNCTION_CONFIG"
	// MergeEnv, set to anything but "true" or "1", turns merging off.
	MergeEnv = "KUST_MERGE"
	// OverrideDirEnv is kustomize's override directory (not supported).
	OverrideDirEnv = "KUST_OVERRIDE_DIR"
)

// wrapDir is the directory Wrap puts new objects in.
const wrapDir = "config"

// Wrap runs argv as a KRM function body (see the package documentation):
// stdin holds a ResourceList, stdout receives the resulting ResourceList,
// CMD's standard error goes to stderr; environ is the environment CMD
// starts from.
func Wrap(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) error {
	if len(argv) == 0 {
		return errors.New("fn wrap: name the command to run after --")
	}
	env := map[string]string{}
	for _, e := range environ {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	if env[OverrideDirEnv] != "" {
		return fmt.Errorf("fn wrap: %s is not supported yet by kpipe", OverrideDirEnv)
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("fn wrap: reading stdin: %w", err)
	}
	items, fc, err := readResourceList(in)
	if err != nil {
		return fmt.Errorf("fn wrap: the input is not a ResourceList: %w", err)
	}
	cmdEnv := append([]string(nil), environ...)
	if fc != nil {
		b, err := output.MarshalValue(fc)
		if err != nil {
			return fmt.Errorf("fn wrap: encoding functionConfig: %w", err)
		}
		cmdEnv = append(cmdEnv, FunctionConfigEnv+"="+string(b))
		cmdEnv = append(cmdEnv, fieldEnv(resource.LookupMap(fc, "metadata"))...)
		cmdEnv = append(cmdEnv, fieldEnv(resource.LookupMap(fc, "spec"))...)
	}
	list := make([]any, len(items))
	for i, r := range items {
		list[i] = resource.CopyMap(r.Object())
	}
	listYAML, err := output.MarshalValue(map[string]any{"apiVersion": "v1", "kind": "List", "items": list})
	if err != nil {
		return fmt.Errorf("fn wrap: encoding the items: %w", err)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = cmdEnv
	cmd.Stdin = bytes.NewReader(listYAML)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	procgroup.Prepare(cmd)
	err = cmd.Run()
	procgroup.Reap(cmd)
	if err != nil {
		return fmt.Errorf("fn wrap: %s: %w", strings.Join(argv, " "), err)
	}
	printed, err := readObjects(out.Bytes())
	if err != nil {
		return fmt.Errorf("fn wrap: the output of %s: %w", argv[0], err)
	}
	result := printed
	if m := env[MergeEnv]; m == "" || m == "true" || m == "1" {
		if result, err = merge(items, printed); err != nil {
			return fmt.Errorf("fn wrap: merging the output of %s: %w", argv[0], err)
		}
	}
	setFilenames(result)
	objs := make([]any, len(result))
	for i, r := range result {
		objs[i] = r.Object()
	}
	b, err := output.MarshalValue(map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": objs})
	if err != nil {
		return fmt.Errorf("fn wrap: encoding the result: %w", err)
	}
	_, err = stdout.Write(b)
	return err
}

// readResourceList reads a ResourceList's items and functionConfig.
func readResourceList(data []byte) ([]*resource.Resource, map[string]any, error) {
	vals, err := resyaml.DecodeValues(data)
	if err != nil {
		return nil, nil, err
	}
	if len(vals) != 1 {
		return nil, nil, fmt.Errorf("%d documents", len(vals))
	}
	m, _ := vals[0].(map[string]any)
	if m == nil || m["kind"] != "ResourceList" {
		return nil, nil, fmt.Errorf("kind is not ResourceList")
	}
	var items []*resource.Resource
	raw, _ := m["items"].([]any)
	for i, it := range raw {
		o, ok := it.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("item %d is not an object", i)
		}
		items = append(items, resource.New(o))
	}
	fc, _ := m["functionConfig"].(map[string]any)
	return items, fc, nil
}

// readObjects reads a command's output: objects, a List or a ResourceList
// of them; each needs a kind and a name.
func readObjects(data []byte) ([]*resource.Resource, error) {
	vals, err := resyaml.DecodeValues(data)
	if err != nil {
		return nil, err
	}
	var objs []*resource.Resource
	for i, v := range vals {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d is not an object but %s", i+1, resource.KindOf(v))
		}
		if k := m["kind"]; k == "List" || k == "ResourceList" {
			items, _ := m["items"].([]any)
			for j, it := range items {
				o, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("document %d: item %d is not an object", i+1, j)
				}
				objs = append(objs, resource.New(o))
			}
			continue
		}
		objs = append(objs, resource.New(m))
	}
	for _, r := range objs {
		if r.Kind() == "" || r.Name() == "" {
			return nil, fmt.Errorf("an object without kind or metadata.name")
		}
	}
	return objs, nil
}

// fieldEnv turns a map's fields into NAME=value variables, in key order;
// a value that is not a scalar gives an empty variable.
func fieldEnv(m map[string]any) []string {
	var out []string
	for _, k := range resource.SortedKeys(m) {
		v, _ := resource.ScalarString(m[k])
		out = append(out, strings.ToUpper(k)+"="+v)
	}
	return out
}

// merge applies each printed object to the input item with its ID as a
// strategic-merge patch, and appends the others.
func merge(items, printed []*resource.Resource) ([]*resource.Resource, error) {
	out := append([]*resource.Resource(nil), items...)
	for _, p := range printed {
		i := -1
		for j, r := range out {
			if r != nil && r.ID().Equals(p.ID()) {
				i = j
				break
			}
		}
		if i < 0 {
			out = append(out, p)
			continue
		}
		merged, deleted, err := smp.Merge(resource.CopyMap(out[i].Object()), p.Object(), smp.Builtin())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.ID(), err)
		}
		if deleted {
			out[i] = nil
			continue
		}
		out[i] = resource.New(merged)
	}
	kept := out[:0]
	for _, r := range out {
		if r != nil {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// setFilenames gives objects without a path `config/<name>_<kind>.yaml`
// and numbers the objects of each file, sorting them by path and index.
func setFilenames(objs []*resource.Resource) {
	type entry struct {
		r     *resource.Resource
		path  string
		index int
		pos   int
	}
	es := make([]entry, len(objs))
	for i, r := range objs {
		p := resourcePath(r)
		if p == "" {
			p = wrapDir + "/" + strings.ToLower(r.Name()) + "_" + strings.ToLower(r.Kind()) + ".yaml"
		}
		ann := r.Annotations()
		idx, err := strconv.Atoi(ann[IndexAnnotation])
		if err != nil {
			if idx, err = strconv.Atoi(ann[LegacyIndexAnnotation]); err != nil {
				idx = 0
			}
		}
		es[i] = entry{r, p, idx, i}
	}
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].path != es[j].path {
			return es[i].path < es[j].path
		}
		return es[i].index < es[j].index
	})
	n := map[string]int{}
	for i, e := range es {
		setPosition(e.r, e.path, n[e.path])
		n[e.path]++
		objs[i] = e.r
	}
}

// resourcePath is an object's path annotation ("" when it has none).
func resourcePath(r *resource.Resource) string {
	ann := r.Annotations()
	if p := ann[PathAnnotation]; p != "" {
		return p
	}
	return ann[LegacyPathAnnotation]
}

// setPosition records an object's file and index in its annotations.
func setPosition(r *resource.Resource, p string, i int) {
	r.SetAnnotation(PathAnnotation, p)
	r.SetAnnotation(LegacyPathAnnotation, p)
	r.SetAnnotation(IndexAnnotation, strconv.Itoa(i))
	r.SetAnnotation(LegacyIndexAnnotation, strconv.Itoa(i))
}
