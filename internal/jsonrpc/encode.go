package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// ToolCall is the params of a tools/call, the request written most: its
// encoding is by hand, its _meta written in place. A *ToolCall is
// encoded as the ToolCall (a call passes one from a pool, so that its
// params are not boxed anew each time).
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// AppendRequest appends a request (or, with id 0, a notification) as one
// line. params is encoded with AppendParams. meta, when set, holds _meta
// members (without braces) that go into the params' _meta, which is made
// when the params have none.
func AppendRequest(b []byte, id uint64, method string, params any, meta []byte) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != 0 {
		b = append(b, `"id":`...)
		b = strconv.AppendUint(b, id, 10)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = AppendString(b, method)
	if p, ok := toolCall(params); ok && meta != nil && p.Meta == nil {
		// The common call: _meta written in place, nothing moved.
		b = append(b, `,"params":{"name":`...)
		b = AppendString(b, p.Name)
		b = append(b, `,"arguments":`...)
		var err error
		if b, err = appendRaw(b, p.Arguments); err != nil {
			return b, err
		}
		b = append(b, `,"_meta":{`...)
		b = append(b, meta...)
		return append(b, "}}}\n"...), nil
	}
	if params != nil || meta != nil {
		b = append(b, `,"params":`...)
		start := len(b)
		var err error
		if params == nil {
			b = append(b, "{}"...)
		} else if b, err = AppendParams(b, params); err != nil {
			return b, err
		}
		if meta != nil {
			if b, err = injectMeta(b, start, meta); err != nil {
				return b, err
			}
		}
	}
	return append(b, "}\n"...), nil
}

// AppendResponse appends, as one line, the response to the request whose
// id is id (raw JSON, as the peer wrote it): result encoded with
// AppendParams, an empty object when nil; raw JSON that is not valid is
// refused.
func AppendResponse(b, id []byte, result any) ([]byte, error) {
	if raw, ok := result.(json.RawMessage); ok && !json.Valid(raw) {
		return b, errors.New("result is not valid JSON")
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	if result == nil {
		b = append(b, "{}"...)
	} else {
		var err error
		if b, err = AppendParams(b, result); err != nil {
			return b, err
		}
	}
	return append(b, "}\n"...), nil
}

// AppendErrorResponse appends, as one line, the error response to the
// request whose id is id (raw JSON): code, message and, when not empty,
// data (raw JSON).
func AppendErrorResponse(b, id []byte, code int64, message string, data []byte) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = AppendString(b, message)
	if len(data) > 0 {
		b = append(b, `,"data":`...)
		var err error
		if b, err = appendRaw(b, data); err != nil {
			return b, err
		}
	}
	return append(b, "}}\n"...), nil
}

// injectMeta adds the _meta members meta to the params object encoded at
// b[start:]: into its _meta object, or into a new one.
func injectMeta(b []byte, start int, meta []byte) ([]byte, error) {
	obj := b[start:]
	if len(obj) == 0 || obj[0] != '{' {
		return b, errors.New("params must be a JSON object")
	}
	at, empty := -1, false
	ndjson.Members(obj, func(key, v []byte) bool {
		if string(key) == "_meta" && len(v) > 0 && v[0] == '{' {
			at = start + cap(obj) - cap(v) + 1 // just inside its brace
			empty = len(bytes.TrimSpace(v[1:len(v)-1])) == 0
			return false
		}
		return true
	})
	if at >= 0 {
		if !empty {
			b = slices.Insert(b, at, ',')
		}
		return slices.Insert(b, at, meta...), nil
	}
	ins := make([]byte, 0, len(meta)+12)
	ins = append(ins, `"_meta":{`...)
	ins = append(ins, meta...)
	ins = append(ins, '}')
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		ins = append(ins, ',')
	}
	return slices.Insert(b, start+1, ins...), nil
}

// toolCall returns params as a ToolCall, when it is one or points to one.
func toolCall(params any) (ToolCall, bool) {
	switch p := params.(type) {
	case ToolCall:
		return p, true
	case *ToolCall:
		if p != nil {
			return *p, true
		}
	}
	return ToolCall{}, false
}

// AppendParams encodes params without a newline. The common shapes are
// written by hand; anything else goes through encoding/json.
func AppendParams(b []byte, params any) ([]byte, error) {
	if raw, ok := params.(json.RawMessage); ok {
		return appendRaw(b, raw)
	}
	if p, ok := toolCall(params); ok {
		b = append(b, `{"name":`...)
		b = AppendString(b, p.Name)
		b = append(b, `,"arguments":`...)
		b, err := appendRaw(b, p.Arguments)
		if err != nil {
			return b, err
		}
		if len(p.Meta) > 0 {
			b = append(b, `,"_meta":`...)
			if b, err = appendRaw(b, p.Meta); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	enc, err := json.Marshal(params)
	if err != nil {
		return b, err
	}
	return append(b, enc...), nil
}

// appendRaw appends raw JSON, compacted if it spans lines.
func appendRaw(b, raw []byte) ([]byte, error) {
	for _, c := range raw {
		if c == '\n' || c == '\r' {
			compact, err := json.Marshal(json.RawMessage(raw))
			if err != nil {
				return b, err
			}
			return append(b, compact...), nil
		}
	}
	return append(b, raw...), nil
}

// AppendString appends s as a JSON string.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			enc, _ := json.Marshal(s)
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// maxFastKeys bounds the maps appendArgs encodes itself.
const maxFastKeys = 16

// AppendArgs appends args as a JSON object when it is a map of the kinds
// tool arguments usually are: string keys, and strings, booleans, nulls and
// integers (as ints or as whole float64s) as values; keys are sorted, as
// encoding/json sorts them. It reports false for anything else, which
// encoding/json then encodes.
func AppendArgs(b []byte, args any) ([]byte, bool) {
	switch m := args.(type) {
	case map[string]string:
		return appendMap(b, m, appendStringValue)
	case map[string]any:
		return appendMap(b, m, appendScalar)
	}
	return b, false
}

// appendMap appends m as a JSON object with sorted keys, each value by
// value; it leaves b as it was and reports false when m is too large or a
// value cannot be written.
func appendMap[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, bool)) ([]byte, bool) {
	if len(m) > maxFastKeys {
		return b, false
	}
	var arr [maxFastKeys]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	start := len(b)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = value(b, m[k]); !ok {
			return b[:start], false
		}
	}
	return append(b, '}'), true
}

func appendStringValue(b []byte, s string) ([]byte, bool) { return AppendString(b, s), true }

// appendScalar appends v when it is a string, a boolean, nil or an integer
// that encoding/json would write the same way.
func appendScalar(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case string:
		return AppendString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case nil:
		return append(b, "null"...), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 && !(v == 0 && math.Signbit(v)) {
			return strconv.AppendInt(b, int64(v), 10), true
		}
	}
	return b, false
}
