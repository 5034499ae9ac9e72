package engine

import (
	"bytes"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/resource"
)

// Sensitive cache entries. A value that holds a Secret's data, or output
// that a plugin, a KRM function or helm produced (which may be decrypted
// secrets: the KSOPS pattern), is stored with cache.Store.PutSensitive:
// never sent to a remote cache unless the user allows it, and never
// printed. The checks are conservative: a false "sensitive" only keeps an
// entry local.

// hasSecret reports whether rs holds a Secret.
func hasSecret(rs []*resource.Resource) bool {
	for _, r := range rs {
		if r.Kind() == "Secret" {
			return true
		}
	}
	return false
}

// yamlHasSecret reports whether rendered output may hold a Secret.
func yamlHasSecret(y []byte) bool { return bytes.Contains(y, []byte("kind: Secret")) }

// runsPlugins reports whether n or a node it includes declares
// generators, transformers, validators or helm charts (whose output may
// be anything a plugin read).
func runsPlugins(n *Node) bool {
	seen := map[*Node]bool{}
	var walk func(n *Node) bool
	walk = func(n *Node) bool {
		if n == nil || seen[n] {
			return false
		}
		seen[n] = true
		if k := n.K; k != nil && len(k.Generators)+len(k.Transformers)+len(k.Validators)+len(k.HelmCharts) > 0 {
			return true
		}
		for _, e := range n.Children() {
			if walk(e.Child) {
				return true
			}
		}
		return false
	}
	return walk(n)
}

// put stores a value, marked sensitive when it is.
func (m *memo) put(k cache.Key, data []byte, sensitive bool) {
	if sensitive {
		m.Store.PutSensitive(k, data)
	} else {
		m.Store.Put(k, data)
	}
}
