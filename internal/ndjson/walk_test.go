package ndjson

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trace walks v whole, objects by Members and arrays by Elements (each
// array twice, so that the walk comes back to what it crossed), and writes
// down every key and value it is given.
func trace(w *Walk, v []byte, out *strings.Builder) bool {
	switch {
	case len(v) > 0 && v[0] == '{':
		return w.Members(v, func(key, value []byte) bool {
			fmt.Fprintf(out, "key %q value %q\n", key, value)
			return trace(w, value, out)
		})
	case len(v) > 0 && v[0] == '[':
		n := 0
		if !w.Elements(v, func([]byte) bool { n++; return true }) {
			return false
		}
		fmt.Fprintf(out, "%d elements\n", n)
		return w.Elements(v, func(value []byte) bool {
			fmt.Fprintf(out, "element %q\n", value)
			return trace(w, value, out)
		})
	}
	return true
}

// A Walk finds the values a walk without memory finds, whatever the long
// strings hold and however often the walk comes back to them.
func TestAWalkFindsWhatAWalkWithoutMemoryFinds(t *testing.T) {
	long := func(n int, end string) string { return strings.Repeat("x", n) + end }
	for _, doc := range []string{
		`{"content":[{"type":"text","text":"` + long(5000, `\"`) + `"}],"isError":false}`,
		`{"content":[{"type":"text","text":"` + long(300, `\\`) + `"},{"type":"text","text":"` + long(4000, `\\\"`) + `"}]}`,
		`{"a":"` + long(longString, "") + `","b":["` + long(longString-2, "") + `","` + long(longString-1, "") + `"]}`,
		`{"a":{"b":{"c":["` + long(1000, `\n`) + `",{"d":"` + long(700, "") + `"}]}}}`,
		`{"k` + long(300, "") + `":"v","x":"` + long(300, "") + `"}`,
		`["` + long(300, "") + `","` + long(300, "") + `"]`,
	} {
		t.Run(fmt.Sprint(len(doc)), func(t *testing.T) {
			var want, got strings.Builder
			require.True(t, trace(nil, []byte(doc), &want))
			var w Walk
			assert.True(t, trace(&w, []byte(doc), &got))
			assert.Equal(t, want.String(), got.String())
		})
	}
}

// A Walk that remembers a long string does not find its end in a slice
// that cuts it off: the walk fails, as one without memory does.
func TestAWalkDoesNotFindAStringEndPastItsSlice(t *testing.T) {
	doc := []byte(`["` + strings.Repeat("x", 1000) + `"]`)
	var w Walk
	require.True(t, w.Elements(doc, func([]byte) bool { return true }))
	called := false
	assert.False(t, w.Elements(doc[:500], func([]byte) bool { called = true; return true }), "the same memory, the string cut off")
	assert.False(t, called, "no element is found in a slice that cuts the only one off")
}
