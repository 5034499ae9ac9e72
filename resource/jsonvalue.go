package resource

import (
	"math"
	"unicode/utf8"
)

// JSONValue returns a copy of v holding what encoding/json makes of v
// written and read back into an any: every number a float64, an empty
// null what its MarshalJSON writes. False for a value the trip would
// refuse or change in another way (NaN, infinities, invalid UTF-8, a
// time, a type the tree should not hold).
func JSONValue(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if !utf8.ValidString(k) {
				return nil, false
			}
			c, ok := JSONValue(e)
			if !ok {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, ok := JSONValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case nil, bool:
		return t, true
	case string:
		return t, utf8.ValidString(t)
	case EmptyNull:
		if t.Flow {
			return "", true
		}
		return nil, true
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	case uint64:
		return float64(t), true
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	}
	return nil, false
}
