package loaders

import (
	"fmt"
	"strings"

	"github.com/kpipe/kpipe/resource"
)

// How kustomize writes kustomization values in its messages.

// String formats the selector as kustomize does in messages:
// "Kind.version.group/name.namespace:a=annotations:l=labels".
func (s Selector) String() string {
	id := resource.ID{GVK: resource.GVK{Group: s.Group, Version: s.Version, Kind: s.Kind}, Name: s.Name, Namespace: s.Namespace}
	return fmt.Sprintf("%s:a=%s:l=%s", id, s.AnnotationSelector, s.LabelSelector)
}

// String formats the options as kustomize does in messages ("" when they
// change nothing).
func (o *FieldOptions) String() string {
	if o == nil || (o.Delimiter == "" && !o.Create) {
		return ""
	}
	return fmt.Sprintf("%s(%d), create=%t", o.Delimiter, o.Index, o.Create)
}

// ID is the object ID the source names.
func (s *SourceSelector) ID() resource.ID {
	return resource.ID{GVK: resource.GVK{Group: s.Group, Version: s.Version, Kind: s.Kind}, Name: s.Name, Namespace: s.Namespace}
}

// String formats the source as kustomize does in messages:
// "Kind.version.group/name.namespace[:fieldPath][:options]".
func (s *SourceSelector) String() string {
	if s == nil {
		return ""
	}
	parts := []string{s.ID().String()}
	if s.FieldPath != "" {
		parts = append(parts, s.FieldPath)
	}
	if o := s.Options.String(); o != "" {
		parts = append(parts, o)
	}
	return strings.Join(parts, ":")
}

// String formats the var as kustomize's messages do: "{NAME
// Kind.version.group {fieldPath}}", where the object is shown by its group,
// version and kind only.
func (v Var) String() string {
	g := resource.GVK{Group: v.ObjRef.Group, Version: v.ObjRef.Version, Kind: v.ObjRef.Kind}
	return fmt.Sprintf("{%s %s {%s}}", v.Name, g, v.FieldRef.FieldPath)
}
