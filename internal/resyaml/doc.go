// Package resyaml reads YAML into kpipe's resource model (package
// resource) the way kustomize reads it: Decode splits a stream into
// objects (expanding Lists), DecodeValues reads plain trees. The decoder
// corrects what kustomize reads differently from yaml.v3 (folded block
// scalars, keys that are not strings, `x:` apart from `x: null`; see
// nodefix.go), so that the output package can reproduce kustomize's
// bytes. Documents in the plain block style of generated CRDs are read
// by fastDecode (fastyaml.go) straight into the same trees; anything else
// goes through yaml.v3. It also holds the yaml.v3 node helpers that the
// stages working on nodes and `kpipe fn` share (ynode.go).
//
// It imports the resource package only.
package resyaml
