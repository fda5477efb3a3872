package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ToolSchemaOptions says what the Agent does with an input schema that
// the Model refuses (see ToolChecker). The zero value, and a nil
// Agent.ToolSchemas, is the default.
type ToolSchemaOptions struct {
	// NoFlatten leaves out a tool whose input schema starts with anyOf,
	// oneOf or allOf and that the Model refuses, naming it in the section
	// "Unavailable MCP Tools". By default the Agent flattens the branches
	// into one object, as Claude Code does, and sends that when the Model
	// takes it.
	NoFlatten bool
}

// Bounds of the work flattening a stranger's schema may cost: the
// branches of its top-level combinators, together, and the properties
// they merge into. Past either the tool is left out.
const (
	maxFlattenBranches   = 1024
	maxFlattenProperties = 4096
)

// suspectDepth and suspectNodes bound the walk that looks for what
// makes a flattened schema suspect (see suspect): past the depth, as
// Claude Code's, or the count, the schema is.
const (
	suspectDepth = 64
	suspectNodes = 1 << 20
)

// combinators are the keywords a schema may start with that the
// Messages API refuses at the top level, in the order they are merged.
var combinators = []string{"anyOf", "oneOf", "allOf"}

// propertyName is what a merged property may be called (what the
// Messages API takes); others are dropped.
var propertyName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// keptKeys are the top-level keys a flattened schema keeps from the
// original.
var keptKeys = []string{"$defs", "definitions", "$schema", "additionalProperties", "description", "title"}

// localRef is a $ref the flattening follows: into the schema's own
// $defs or definitions, one level.
var localRef = regexp.MustCompile(`^#/(\$defs|definitions)/([^/]+)$`)

// flattened is an input schema whose top-level combinators were merged
// into one object, and the note that tells the model what they required.
type flattened struct {
	schema json.RawMessage
	note   string
}

// rootCombinators are the combinators the schema starts with, in merge
// order, or none when it is not a JSON object.
func rootCombinators(schema json.RawMessage) []string {
	top, ok := members(schema)
	if !ok {
		return nil
	}
	var found []string
	for _, k := range combinators {
		if _, ok := top.get(k); ok {
			found = append(found, k)
		}
	}
	return found
}

// flatten merges the top-level anyOf, oneOf and allOf of schema into one
// object schema, as Claude Code does: the properties of the schema and of
// every branch ($refs to the schema's $defs or definitions followed; a
// name outside ^[a-zA-Z0-9_.-]{1,64}$ dropped; the first definition of a
// name wins), required holding the schema's, the allOf branches', and
// with everyBranch the names every anyOf (oneOf) branch requires, and,
// with everyBranch, a property the anyOf or oneOf branches define
// differently becoming an anyOf of their definitions (those of type
// "string" first). $defs, definitions, $schema, additionalProperties,
// description and title are kept; additionalProperties is true when the
// schema does not say. The note tells the model which groups of
// parameters go together.
//
// The error is the reason, in Claude Code's words, when it cannot be
// done.
func flatten(schema json.RawMessage, everyBranch bool) (*flattened, error) {
	top, ok := members(schema)
	if !ok {
		return nil, errors.New("its input schema is not a JSON object")
	}
	used := rootCombinators(schema)
	if len(used) == 0 {
		return nil, errors.New("its input schema has no top-level anyOf, oneOf or allOf")
	}
	cannot := fmt.Errorf("input schema uses top-level %s and could not be normalized", strings.Join(used, "/"))
	branches := map[string][]json.RawMessage{}
	n := 0
	for _, k := range used {
		raw, _ := top.get(k)
		list, ok := elements(raw)
		if !ok {
			return nil, fmt.Errorf("input schema has top-level %s that is not an array", k)
		}
		branches[k] = resolve(list, top)
		if n += len(branches[k]); n > maxFlattenBranches {
			return nil, cannot
		}
	}

	var props object
	defined := map[string]bool{}               // the names of props
	variants := map[string][]json.RawMessage{} // by name, of names an anyOf or oneOf branch defined first
	tooMany := false
	merge := func(raw json.RawMessage, compare bool) {
		defs, ok := members(raw)
		if !ok || tooMany {
			return
		}
		for _, m := range defs {
			if !propertyName.MatchString(m.key) || !isObject(m.value) {
				continue
			}
			if !defined[m.key] {
				if len(props) == maxFlattenProperties {
					tooMany = true
					return
				}
				defined[m.key] = true
				props = append(props, m)
				if compare {
					variants[m.key] = []json.RawMessage{m.value}
				}
			} else if v, ok := variants[m.key]; ok && compare {
				variants[m.key] = append(v, m.value)
			}
		}
	}
	if raw, ok := top.get("properties"); ok {
		merge(raw, false)
	}
	for _, k := range used {
		for _, b := range branches[k] {
			if o, ok := members(b); ok {
				raw, _ := o.get("properties")
				merge(raw, everyBranch && k != "allOf")
			}
		}
	}
	if tooMany {
		return nil, cannot
	}
	for i, m := range props {
		v := distinct(variants[m.key])
		if len(v) < 2 {
			continue
		}
		props[i].value = anyOfStringsFirst(v)
	}
	props = jsOrder(props)

	required := []string{}
	isRequired := map[string]bool{}
	need := func(raw json.RawMessage) {
		var names []any
		if json.Unmarshal(raw, &names) != nil {
			return
		}
		for _, n := range names {
			name, ok := n.(string)
			if ok && defined[name] && !isRequired[name] {
				isRequired[name] = true
				required = append(required, name)
			}
		}
	}
	if raw, ok := top.get("required"); ok {
		need(raw)
	}
	for _, b := range branches["allOf"] {
		if o, ok := members(b); ok {
			raw, _ := o.get("required")
			need(raw)
		}
	}
	if everyBranch {
		for _, k := range []string{"anyOf", "oneOf"} {
			need(requiredByAll(branches[k]))
		}
	}

	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, m := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		writeMember(&b, m.key, m.value)
	}
	b.WriteString(`},"required":`)
	r, _ := json.Marshal(required)
	b.Write(r)
	for _, k := range keptKeys {
		if v, ok := top.get(k); ok {
			b.WriteByte(',')
			writeMember(&b, k, v)
		}
	}
	if _, ok := top.get("additionalProperties"); !ok {
		b.WriteString(`,"additionalProperties":true`)
	}
	b.WriteByte('}')
	anyOrOne := slices.Contains(used, "anyOf") || slices.Contains(used, "oneOf")
	return &flattened{schema: b.Bytes(), note: constraintNote(used, top, branches, anyOrOne)}, nil
}

// constraintNote is what the model is told of the branches flattened,
// in Claude Code's words.
func constraintNote(used []string, top object, branches map[string][]json.RawMessage, anyOrOne bool) string {
	if !anyOrOne {
		return "Input constraint: all listed parameters apply together (flattened from a JSON Schema allOf)."
	}
	k, how := "anyOf", "Provide parameters for at least one of"
	if slices.Contains(used, "oneOf") {
		k, how = "oneOf", "Provide parameters for exactly one of"
	}
	var groups []string
	named := map[string]bool{}
	for _, b := range branches[k] {
		if g, ok := group(b); ok && !named[g] {
			named[g] = true
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return fmt.Sprintf("Input constraint: %s the documented parameter groups (flattened from a JSON Schema %s).", how, k)
	}
	return fmt.Sprintf("Input constraint: %s: (%s).", how, strings.Join(groups, ") or ("))
}

// group names the parameters of a branch: those it requires, else those
// it defines.
func group(branch json.RawMessage) (string, bool) {
	o, ok := members(branch)
	if !ok {
		return "", false
	}
	if raw, ok := o.get("required"); ok {
		var names []string
		if json.Unmarshal(raw, &names) == nil && len(names) > 0 {
			return strings.Join(names, ", "), true
		}
	}
	raw, _ := o.get("properties")
	if defs, ok := members(raw); ok && len(defs) > 0 {
		defs = jsOrder(defs)
		names := make([]string, len(defs))
		for i, m := range defs {
			names[i] = m.key
		}
		return strings.Join(names, ", "), true
	}
	return "", false
}

// requiredByAll is the JSON array of the names every branch requires, in
// the order the first names them.
func requiredByAll(branches []json.RawMessage) json.RawMessage {
	if len(branches) == 0 {
		return nil
	}
	counts := map[string]int{}
	var order []string
	for i, b := range branches {
		o, _ := members(b)
		raw, _ := o.get("required")
		var names []json.RawMessage
		json.Unmarshal(raw, &names)
		for _, n := range names {
			var name string
			if json.Unmarshal(n, &name) != nil {
				continue
			}
			if counts[name] == i {
				if i == 0 {
					order = append(order, name)
				}
				counts[name] = i + 1
			}
		}
	}
	all := []string{}
	for _, name := range order {
		if counts[name] == len(branches) {
			all = append(all, name)
		}
	}
	out, _ := json.Marshal(all)
	return out
}

// resolve follows each branch that is a $ref into the schema's own $defs
// or definitions, and drops repeats: of a definition referred to twice,
// of a value that is not an object.
func resolve(list []json.RawMessage, top object) []json.RawMessage {
	var out []json.RawMessage
	seen := map[string]bool{}
	for _, b := range list {
		id := ""
		if o, ok := members(b); ok {
			if target, where, ok := followRef(o, top); ok {
				b, id = target, "ref:"+where
			}
		} else {
			id = "value:" + string(compactJSON(b))
		}
		if id != "" {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		out = append(out, b)
	}
	return out
}

// followRef is the definition a branch's $ref names, when it is an
// object in the schema's own $defs or definitions.
func followRef(branch, top object) (json.RawMessage, string, bool) {
	raw, ok := branch.get("$ref")
	var ref string
	if !ok || json.Unmarshal(raw, &ref) != nil {
		return nil, "", false
	}
	m := localRef.FindStringSubmatch(ref)
	if m == nil {
		return nil, "", false
	}
	defsRaw, _ := top.get(m[1])
	defs, ok := members(defsRaw)
	if !ok {
		return nil, "", false
	}
	target, ok := defs.get(m[2])
	if !ok || !isObject(target) {
		return nil, "", false
	}
	return target, m[1] + "/" + m[2], true
}

// distinct drops the schemas equal to an earlier one (as JSON values:
// keys in any order, numbers by value).
func distinct(list []json.RawMessage) []json.RawMessage {
	if len(list) < 2 {
		return list
	}
	var out []json.RawMessage
	seen := map[string]bool{}
	for _, s := range list {
		var v any
		json.Unmarshal(s, &v)
		key, _ := json.Marshal(v) // maps sorted by key
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, s)
		}
	}
	return out
}

// anyOfStringsFirst is {"anyOf": list}, the schemas of type "string"
// first.
func anyOfStringsFirst(list []json.RawMessage) json.RawMessage {
	isString := func(s json.RawMessage) bool {
		o, _ := members(s)
		raw, _ := o.get("type")
		var t string
		return json.Unmarshal(raw, &t) == nil && t == "string"
	}
	var b bytes.Buffer
	b.WriteString(`{"anyOf":[`)
	i := 0
	for _, first := range []bool{true, false} {
		for _, s := range list {
			if isString(s) != first {
				continue
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(compactJSON(s))
			i++
		}
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// suspect reports what makes Claude Code flatten anyOf and oneOf again
// without merging their branches' differences: a schema nested deeper
// than suspectDepth, or a required or type that is an array of two or
// more not all strings (also in dependencies and dependentRequired).
func suspect(schema json.RawMessage) bool {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return true
	}
	badList := func(v any) bool {
		l, ok := v.([]any)
		if !ok || len(l) < 2 {
			return false
		}
		for _, e := range l {
			if _, ok := e.(string); !ok {
				return true
			}
		}
		return false
	}
	bad := func(k string, v any) bool {
		switch k {
		case "required", "type":
			return badList(v)
		case "dependencies", "dependentRequired":
			if m, ok := v.(map[string]any); ok {
				for _, d := range m {
					if badList(d) {
						return true
					}
				}
			}
		}
		return false
	}
	type node struct {
		v     any
		depth int
	}
	stack := []node{{root, 1}}
	for seen := 0; len(stack) > 0; seen++ {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.depth > suspectDepth || seen > suspectNodes {
			return true
		}
		switch v := n.v.(type) {
		case []any:
			for _, e := range v {
				stack = append(stack, node{e, n.depth + 1})
			}
		case map[string]any:
			for k, e := range v {
				if bad(k, e) {
					return true
				}
				stack = append(stack, node{e, n.depth + 1})
			}
		}
	}
	return false
}

// withNote is a tool's description with the note of its flattening
// first.
func withNote(note, description string) string {
	if description == "" {
		return note
	}
	return note + "\n\n" + description
}

// member is one key of a JSON object and its value.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object's members in their order; a key given twice
// has its last value at its first place.
type object []member

func (o object) get(k string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.key == k {
			return m.value, true
		}
	}
	return nil, false
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// members reads a JSON object; false when raw is not one.
func members(raw json.RawMessage) (object, bool) {
	if !isObject(raw) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil {
		return nil, false
	}
	var o object
	at := map[string]int{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false
		}
		if i, ok := at[k]; ok {
			o[i].value = v
			continue
		}
		at[k] = len(o)
		o = append(o, member{k, v})
	}
	return o, true
}

// elements reads a JSON array; false when raw is not one.
func elements(raw json.RawMessage) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var list []json.RawMessage
	return list, json.Unmarshal(raw, &list) == nil
}

// jsOrder orders members as a JavaScript object does, which is how
// Claude Code sends them: names that are array indexes (0 to 2³²-2,
// written without leading zeros) first, by value, then the others in
// their order.
func jsOrder(o object) object {
	index := func(k string) (uint64, bool) {
		if k == "" || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
			return 0, false
		}
		n, err := strconv.ParseUint(k, 10, 64)
		return n, err == nil && n < 1<<32-1
	}
	out := slices.Clone(o)
	slices.SortStableFunc(out, func(a, b member) int {
		na, ia := index(a.key)
		nb, ib := index(b.key)
		switch {
		case ia && ib:
			return int(int64(na) - int64(nb))
		case ia:
			return -1
		case ib:
			return 1
		}
		return 0
	})
	return out
}

func writeMember(b *bytes.Buffer, k string, v json.RawMessage) {
	key, _ := json.Marshal(k)
	b.Write(key)
	b.WriteByte(':')
	b.Write(compactJSON(v))
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
