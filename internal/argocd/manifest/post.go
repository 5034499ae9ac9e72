package manifest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Tracking methods (argocd-cm application.resourceTrackingMethod).
const (
	TrackingAnnotation         = "annotation"
	TrackingLabel              = "label"
	TrackingAnnotationAndLabel = "annotation+label"
)

// Annotation and label keys Argo CD sets.
const (
	AnnotationTrackingID     = "argocd.argoproj.io/tracking-id"
	AnnotationInstallationID = "argocd.argoproj.io/installation-id"
	LabelLegacyAppName       = "applications.argoproj.io/app-name"
	DefaultAppLabelKey       = "app.kubernetes.io/instance"
)

// Tracking is how the repo-server marks the objects of an Application.
type Tracking struct {
	Method         string // "" is annotation
	LabelKey       string // application.instanceLabelKey; "" disables tracking
	AppName        string // the instance name; "" disables tracking
	Namespace      string // the destination namespace
	InstallationID string
}

// GroupVersionKind splits apiVersion as Kubernetes' ParseGroupVersion
// does (an invalid one gives empty group and version).
func GroupVersionKind(o Object) (group, version, kind string) {
	av, _ := o["apiVersion"].(string)
	kind, _ = o["kind"].(string)
	switch strings.Count(av, "/") {
	case 0:
		return "", av, kind
	case 1:
		g, v, _ := strings.Cut(av, "/")
		return g, v, kind
	}
	return "", "", kind
}

func gvkString(o Object) string {
	g, v, k := GroupVersionKind(o)
	return g + "/" + v + ", Kind=" + k
}

func metaString(o Object, field string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[field].(string)
	return s
}

// Name and Namespace are the object's metadata.name and
// metadata.namespace ("" when absent or not strings).
func Name(o Object) string      { return metaString(o, "name") }
func Namespace(o Object) string { return metaString(o, "namespace") }

// IsCRD reports an apiextensions.k8s.io CustomResourceDefinition.
func IsCRD(o Object) bool {
	g, _, k := GroupVersionKind(o)
	return g == "apiextensions.k8s.io" && k == "CustomResourceDefinition"
}

// Flatten replaces every object holding an "items" list by its items (one
// level, as obj.IsList/EachListItem do) and drops a List whose items is
// null (isNullList), in order.
func Flatten(objs []Object) ([]Object, error) {
	var out []Object
	for _, o := range objs {
		if o == nil {
			continue
		}
		items, hasItems := o["items"]
		if list, ok := items.([]any); ok {
			for _, it := range list {
				m, ok := it.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("items member is not an object: %T", it)
				}
				out = append(out, m)
			}
			continue
		}
		_, spec := o["spec"]
		_, status := o["status"]
		if hasItems && items == nil && !spec && !status {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// nestedStringMap is Argo CD's nestedNullableStringMap on metadata.<field>.
func nestedStringMap(o Object, field string) (map[string]string, error) {
	path := ".metadata." + field
	mv, ok := o["metadata"]
	if !ok || mv == nil {
		return nil, nil
	}
	meta, ok := mv.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(".metadata accessor error: %v is of the type %T, expected map[string]interface{}", mv, mv)
	}
	v, ok := meta[field]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s accessor error: %v is of the type %T, expected map[string]interface{}", path, v, v)
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s accessor error: contains non-string value in the map under key %q: %v is of the type %T, expected string", path, k, e, e)
		}
		out[k] = s
	}
	return out, nil
}

// setStringMap is unstructured's SetLabels/SetAnnotations (nil removes
// the field).
func setStringMap(o Object, field string, m map[string]string) {
	meta, _ := o["metadata"].(map[string]any)
	if m == nil {
		if meta != nil {
			delete(meta, field)
		}
		return
	}
	if meta == nil {
		meta = map[string]any{}
		o["metadata"] = meta
	}
	v := make(map[string]any, len(m))
	for k, s := range m {
		v[k] = s
	}
	meta[field] = v
}

// setNamespace is unstructured's SetNamespace ("" removes it).
func setNamespace(o Object, ns string) {
	meta, _ := o["metadata"].(map[string]any)
	if ns == "" {
		if meta != nil {
			delete(meta, "namespace")
		}
		return
	}
	if meta == nil {
		meta = map[string]any{}
		o["metadata"] = meta
	}
	meta["namespace"] = ns
}

func where(o Object) string { return gvkString(o) + " " + Namespace(o) + "/" + Name(o) }

var okEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-zA-Z0-9]$`) })

// truncateLabel is Argo CD's TruncateLabel.
func truncateLabel(v string) (string, error) {
	if len(v) <= 63 {
		return v, nil
	}
	v = v[:63]
	for !okEnd().MatchString(v) {
		if len(v) <= 1 {
			return "", errors.New("unable to truncate label to not end with a special character")
		}
		v = v[:len(v)-1]
	}
	return v, nil
}

// TrackingID is the annotation value: <app>:<group>/<Kind>:<ns>/<name>,
// the destination namespace standing for an object without one.
func (t Tracking) TrackingID(o Object) string {
	g, _, k := GroupVersionKind(o)
	ns := Namespace(o)
	if ns == "" {
		ns = t.Namespace
	}
	return fmt.Sprintf("%s:%s/%s:%s/%s", t.AppName, g, k, ns, Name(o))
}

// Apply marks o as Argo CD's SetAppInstance does for the method.
func (t Tracking) Apply(o Object) error {
	annotate := func() error {
		if t.InstallationID != "" {
			ann, err := nestedStringMap(o, "annotations")
			if err != nil {
				return fmt.Errorf("failed to get annotations from target object %s: %w", where(o), err)
			}
			if ann == nil {
				ann = map[string]string{}
			}
			ann[AnnotationInstallationID] = t.InstallationID
			setStringMap(o, "annotations", ann)
		} else {
			ann, err := nestedStringMap(o, "annotations")
			if err != nil {
				return fmt.Errorf("failed to get annotations for %s: %w", where(o), err)
			}
			if _, ok := ann[AnnotationInstallationID]; ok {
				delete(ann, AnnotationInstallationID)
				if len(ann) == 0 {
					ann = nil
				}
				setStringMap(o, "annotations", ann)
			}
		}
		ann, err := nestedStringMap(o, "annotations")
		if err != nil {
			return fmt.Errorf("failed to get annotations from target object %s: %w", where(o), err)
		}
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationTrackingID] = t.TrackingID(o)
		setStringMap(o, "annotations", ann)
		return nil
	}
	label := func(v string) error {
		lbl, err := nestedStringMap(o, "labels")
		if err != nil {
			return fmt.Errorf("failed to set app instance label: failed to get labels from target object %s: %w", where(o), err)
		}
		if lbl == nil {
			lbl = map[string]string{}
		}
		lbl[t.LabelKey] = v
		setStringMap(o, "labels", lbl)
		if t.LabelKey == LabelLegacyAppName {
			labelTemplates(o, t.LabelKey, v)
		}
		return nil
	}
	switch t.Method {
	case TrackingLabel:
		return label(t.AppName)
	case TrackingAnnotationAndLabel:
		if err := annotate(); err != nil {
			return err
		}
		v, err := truncateLabel(t.AppName)
		if err != nil {
			return fmt.Errorf("failed to set app instance label: %w", err)
		}
		return label(v)
	}
	return annotate()
}

// labelTemplates labels pod templates, for the legacy label key only.
func labelTemplates(o Object, key, v string) {
	g, _, k := GroupVersionKind(o)
	switch {
	case (g == "apps" || g == "extensions") && (k == "Deployment" || k == "ReplicaSet" || k == "StatefulSet" || k == "DaemonSet"),
		g == "batch" && k == "Job":
	default:
		return
	}
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		o["spec"] = spec
	}
	tmpl, _ := spec["template"].(map[string]any)
	if tmpl == nil {
		tmpl = map[string]any{}
		spec["template"] = tmpl
	}
	meta, _ := tmpl["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		tmpl["metadata"] = meta
	}
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[key] = v
	meta["labels"] = labels
	av, _ := o["apiVersion"].(string)
	if g != "batch" && (av == "apps/v1beta1" || av == "extensions/v1beta1") {
		if sel, _ := spec["selector"].(map[string]any); len(sel) == 0 {
			ml := map[string]any{}
			for lk, lv := range labels {
				if lk != key {
					ml[lk] = lv
				}
			}
			spec["selector"] = map[string]any{"matchLabels": ml}
		}
	}
}

// Generated is GenerateManifests' last step over a source's objects:
// Lists flattened, every object but a CRD tracked (unless the label key
// or app name is empty). Errors are worded as the repo-server's.
func Generated(objs []Object, t Tracking) ([]Object, error) {
	flat, err := Flatten(objs)
	if err != nil {
		return nil, err
	}
	for _, o := range flat {
		if t.LabelKey != "" && t.AppName != "" && !IsCRD(o) {
			if err := t.Apply(o); err != nil {
				return nil, fmt.Errorf("failed to set app instance tracking info on manifest: %w", err)
			}
		}
	}
	return flat, nil
}
