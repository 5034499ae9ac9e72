package postbuild

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// The owner labels, on every object of a Flux Kustomization's build.
const (
	OwnerNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	OwnerNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// What flux build prints in place of SOPS-encrypted values.
const (
	sopsMask = "**SOPS**"
	// dockerconfigjsonType Secrets are masked with a JSON object.
	dockerconfigjsonType = "kubernetes.io/dockerconfigjson"
)

// setOwnerLabels sets the owner labels as kyaml's SetLabel does
// (metadata.labels created when missing, existing values overwritten).
func setOwnerLabels(obj map[string]any, name, namespace string) error {
	labels, err := createMap(obj, "metadata", "labels")
	if err != nil {
		return err
	}
	labels[OwnerNameLabel] = name
	labels[OwnerNamespaceLabel] = namespace
	return nil
}

// createMap returns the map at path, creating the missing (or null)
// steps.
func createMap(m map[string]any, path ...string) (map[string]any, error) {
	for _, p := range path {
		switch next := m[p].(type) {
		case map[string]any:
			m = next
		case nil:
			created := map[string]any{}
			m[p] = created
			m = created
		default:
			return nil, fmt.Errorf("wrong node kind: expected MappingNode but got %s: node contents:\n%s", nodeKind(next), scalarText(next))
		}
	}
	return m, nil
}

func nodeKind(v any) string {
	if _, ok := v.([]any); ok {
		return "SequenceNode"
	}
	return "ScalarNode"
}

// MaskSOPS masks a Secret's SOPS-encrypted values as flux build does
// (flux2 internal/build maskSopsData). When the Secret's text holds both
// "sops:" and "mac: ENC[" the whole object is taken as encrypted: its sops
// field is removed and every data value becomes base64("**SOPS**") and
// every stringData value "**SOPS**" (for a kubernetes.io/dockerconfigjson
// Secret, the JSON {"mask":"**SOPS**"}, base64-encoded in data). Otherwise
// each data value whose base64 decoding holds "sops" and "ENC[" and each
// stringData value holding them becomes base64("**SOPS**"), and a data
// value that is not base64 is an error. Either way data is rewritten as a
// map of strings (and removed when empty), as kustomize's SetDataMap
// writes it. Objects of other kinds are left alone.
func MaskSOPS(obj map[string]any) error {
	if obj["kind"] != "Secret" {
		return nil
	}
	name := stringField(obj, "metadata", "name")
	sopsMess := base64.StdEncoding.EncodeToString([]byte(sopsMask))
	data := valuesOf(obj["data"])
	stringData := valuesOf(obj["stringData"])
	text, err := encodeOne(normalize(obj).(map[string]any))
	if err != nil {
		return fmt.Errorf("failed to mask secret %s sops data: %w", name, err)
	}
	if bytes.Contains(text, []byte("sops:")) && bytes.Contains(text, []byte("mac: ENC[")) {
		delete(obj, "sops")
		secretType, hasType := obj["type"]
		if !hasType {
			secretType = "Opaque"
		}
		if secretType == dockerconfigjsonType {
			const maskJSON = `{"mask":"` + sopsMask + `"}`
			for k := range data {
				data[k] = base64.StdEncoding.EncodeToString([]byte(maskJSON))
			}
			for k := range stringData {
				stringData[k] = maskJSON
			}
		} else {
			for k := range data {
				data[k] = sopsMess
			}
			for k := range stringData {
				stringData[k] = sopsMask
			}
		}
	} else {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			decoded, err := base64.StdEncoding.DecodeString(data[k])
			var corrupt base64.CorruptInputError
			if errors.As(err, &corrupt) {
				return fmt.Errorf("failed to mask secret %s sops data: %w", name, corrupt)
			}
			if bytes.Contains(decoded, []byte("sops")) && bytes.Contains(decoded, []byte("ENC[")) {
				data[k] = sopsMess
			}
		}
		for k, v := range stringData {
			if bytes.Contains([]byte(v), []byte("sops")) && bytes.Contains([]byte(v), []byte("ENC[")) {
				stringData[k] = sopsMess
			}
		}
	}
	delete(obj, "data")
	if len(data) > 0 {
		obj["data"] = stringMap(data)
	}
	if len(stringData) > 0 {
		obj["stringData"] = stringMap(stringData)
	}
	return nil
}

// valuesOf reads a map's values as kyaml's GetDataMap does: each value's
// scalar text ("" for maps and lists); anything but a map reads as empty.
func valuesOf(v any) map[string]string {
	out := map[string]string{}
	if m, ok := v.(map[string]any); ok {
		for k, e := range m {
			out[k] = scalarText(e)
		}
	}
	return out
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
