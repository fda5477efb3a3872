// Package schemawork bounds what a JSON Schema from a stranger may cost
// before it is used.
package schemawork

import (
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// A JSON Schema can cost far more to apply than its size says: a 2 KB
// schema whose allOf entries refer twice to the next definition, forty
// deep, applies 2^40 subschemas to one value. A server chooses the
// schemas a client validates with, so before a schema is used its work is
// bounded: schemaWork counts the subschemas that applying it to one value
// may visit (each $ref followed, each shared subschema counted every time
// it is reached), and a schema past MaxSchemaWork is not used. Applying a
// schema to a document then costs at most its work times the document's
// values, which validation bounds too (MaxValidationWork).
const (
	MaxSchemaWork     = 20_000
	MaxValidationWork = 50_000_000
)

// Of returns the work of the decoded schema doc (see above), or
// limit+1 once it passes limit. base is the URI the schema is known by;
// $ref is resolved within the document only (nothing else is loaded).
func Of(doc any, base string, limit int) int {
	w := &workCounter{limit: limit, byURI: map[string]any{}, roots: map[string]any{}, memo: map[any]int{}, busy: map[any]bool{}}
	w.index(doc, base)
	return w.cost(doc, base)
}

type workCounter struct {
	limit int
	byURI map[string]any // subschemas by their $id or anchor URI
	memo  map[any]int    // the work of subschemas seen (keyed by their map's identity)
	busy  map[any]bool   // subschemas being counted: a $ref cycle
	roots map[string]any // resources by URI without fragment, for JSON pointers
}

// Keywords whose value is one subschema, an array of them, or an object of
// them, as the drafts from 4 to 2020-12 define them.
var (
	oneSchema = []string{"not", "if", "then", "else", "additionalProperties", "unevaluatedProperties",
		"unevaluatedItems", "contains", "propertyNames", "additionalItems", "items"}
	schemaList = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMap  = []string{"properties", "patternProperties", "dependentSchemas", "dependencies"}
	refWords   = []string{"$ref", "$dynamicRef", "$recursiveRef"}
)

// index records every subschema with an $id or an anchor, so that $ref can
// find it, and every resource root for JSON pointers.
func (w *workCounter) index(node any, base string) {
	m, ok := node.(map[string]any)
	if !ok {
		if list, ok := node.([]any); ok {
			for _, v := range list {
				w.index(v, base)
			}
		}
		return
	}
	if id, ok := m["$id"].(string); ok {
		base = resolveURI(base, id)
		w.byURI[stripFragment(base)] = m
	}
	if _, ok := w.roots[stripFragment(base)]; !ok {
		w.roots[stripFragment(base)] = m
	}
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := m[k].(string); ok {
			w.byURI[stripFragment(base)+"#"+a] = m
		}
	}
	for k, v := range m {
		if k == "enum" || k == "const" || k == "default" || k == "examples" {
			continue // values, not schemas
		}
		w.index(v, base)
	}
}

// cost counts node and what applying it may visit.
func (w *workCounter) cost(node any, base string) int {
	m, ok := node.(map[string]any)
	if !ok {
		return 1 // true, false, or something that is no schema
	}
	if c, ok := w.memo[key(m)]; ok {
		return c
	}
	if w.busy[key(m)] {
		return 1 // a cycle ends where the value does
	}
	w.busy[key(m)] = true
	defer delete(w.busy, key(m))
	if id, ok := m["$id"].(string); ok {
		base = resolveURI(base, id)
	}
	total := 1
	add := func(c int) {
		total = min(total+c, w.limit+1)
	}
	for _, k := range oneSchema {
		if v, ok := m[k].(map[string]any); ok {
			add(w.cost(v, base))
		}
	}
	for _, k := range schemaList {
		if list, ok := m[k].([]any); ok {
			for _, v := range list {
				add(w.cost(v, base))
			}
		}
	}
	for _, k := range schemaMap {
		if obj, ok := m[k].(map[string]any); ok {
			for _, v := range obj {
				add(w.cost(v, base))
			}
		}
	}
	for _, k := range refWords {
		if ref, ok := m[k].(string); ok {
			if target := w.resolve(base, ref); target != nil {
				add(w.cost(target, base))
			}
		}
	}
	w.memo[key(m)] = total
	return total
}

// resolve finds the subschema ref names, or nil.
func (w *workCounter) resolve(base, ref string) any {
	abs := resolveURI(base, ref)
	if s, ok := w.byURI[abs]; ok {
		return s
	}
	doc, frag, _ := strings.Cut(abs, "#")
	root, ok := w.roots[doc]
	if !ok {
		return nil
	}
	if frag == "" {
		return root
	}
	if !strings.HasPrefix(frag, "/") {
		return nil
	}
	node := any(root)
	for _, tok := range strings.Split(frag[1:], "/") {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	return node
}

// key is the identity of a decoded schema object: the same object reached
// twice (through two $refs) is counted once and its work reused.
func key(m map[string]any) any {
	return reflect.ValueOf(m).UnsafePointer()
}

func resolveURI(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

func stripFragment(u string) string {
	s, _, _ := strings.Cut(u, "#")
	return s
}
