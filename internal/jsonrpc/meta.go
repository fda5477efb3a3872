package jsonrpc

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// AppendMeta appends the string members m (trace context, say) as _meta
// members without braces, in the order of their keys; nothing for none.
func AppendMeta(b []byte, m map[string]string) []byte {
	start := len(b)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if len(b) > start {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		b = AppendString(b, m[k])
	}
	return b
}

// Bounds of what StringMeta takes from a peer's request. Trace context is
// a few short unprefixed strings (W3C baggage: at most 8,192 bytes).
const (
	MaxMetaKeys  = 16
	MaxMetaValue = 8192
)

// StringMeta returns the unprefixed string members of a request's
// params._meta (the protocol's own keys are DNS-prefixed), at most
// MaxMetaKeys of at most MaxMetaValue bytes; nil for none.
func StringMeta(params json.RawMessage) map[string]string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Meta) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range p.Meta {
		if len(out) == MaxMetaKeys {
			break
		}
		var s string
		if strings.Contains(k, "/") || len(v) > MaxMetaValue+2 || json.Unmarshal(v, &s) != nil || len(s) > MaxMetaValue {
			continue
		}
		out[k] = s
	}
	return out
}
