package config

// Edits of a JSON document that keep every byte they do not change: the
// document is read once to find where the objects to change begin and
// end, and written again as the old bytes with the changed spans
// spliced in. A file of any size is edited in constant memory.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// jsonEdit sets (value non-nil) or removes (value nil) the member name of
// the object at path (member names from the root). A set creates the
// objects of path that are missing, each (the object at depth d of path)
// with the members create gives around the next (create may be nil).
type jsonEdit struct {
	path   []string
	name   string
	value  json.RawMessage
	create func(depth int) (before, after []member)
}

// member is a name and a compact JSON value, in order.
type member struct {
	name  string
	value json.RawMessage
}

// objectSpan is where an object of the document is, and its members.
type objectSpan struct {
	open, close int64 // offsets of '{' and '}'
	members     []memberSpan
}

type memberSpan struct {
	name                            string
	nameStart, valueStart, valueEnd int64
}

// splice replaces the bytes [from, to) with text.
type splice struct {
	from, to int64
	text     []byte
}

// SyntaxError says where a file is not JSON, or not the shape expected.
type SyntaxError struct {
	Line, Column int
	Offset       int64
	Msg          string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return e.Msg
}

// locate reads the document and returns the spans of the objects at the
// given paths (joined by "\x00"); a path whose object is missing has none.
// A document that is not one JSON object is a *SyntaxError.
func locate(r io.Reader, paths [][]string) (map[string]*objectSpan, error) {
	want := map[string]bool{}
	for _, p := range paths {
		for i := 0; i <= len(p); i++ {
			want[strings.Join(p[:i], "\x00")] = true
		}
	}
	found := map[string]*objectSpan{}
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadToken(); err != nil && !errors.Is(err, io.EOF) {
			return nil, syntaxError(err, dec.InputOffset())
		}
		return nil, &SyntaxError{Msg: "not a JSON object"}
	}
	if err := walkObject(dec, nil, want, found); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			return nil, &SyntaxError{Offset: dec.InputOffset(), Msg: "more than one JSON value"}
		}
		return nil, syntaxError(err, dec.InputOffset())
	}
	return found, nil
}

// walkObject reads the object the decoder is at, recording its span when
// its path is wanted, and walking into members whose path is.
func walkObject(dec *jsontext.Decoder, path []string, want map[string]bool, found map[string]*objectSpan) error {
	key := strings.Join(path, "\x00")
	record := want[key]
	if _, err := dec.ReadToken(); err != nil {
		return syntaxError(err, dec.InputOffset())
	}
	span := &objectSpan{open: dec.InputOffset() - 1}
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue()
		if err != nil {
			return syntaxError(err, dec.InputOffset())
		}
		m := memberSpan{nameStart: dec.InputOffset() - int64(len(raw))}
		name, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return syntaxError(err, dec.InputOffset())
		}
		m.name = string(name)
		child := append(slices.Clip(path), m.name)
		if record && dec.PeekKind() == '{' && want[strings.Join(child, "\x00")] {
			m.valueStart = peekStart(dec)
			if err := walkObject(dec, child, want, found); err != nil {
				return err
			}
		} else {
			v, err := dec.ReadValue()
			if err != nil {
				return syntaxError(err, dec.InputOffset())
			}
			m.valueStart = dec.InputOffset() - int64(len(v))
		}
		m.valueEnd = dec.InputOffset()
		if record {
			span.members = append(span.members, m)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return syntaxError(err, dec.InputOffset())
	}
	span.close = dec.InputOffset() - 1
	if record {
		found[key] = span
	}
	return nil
}

// peekStart is the offset of the next value: after the whitespace and the
// colon the decoder has yet to read.
func peekStart(dec *jsontext.Decoder) int64 {
	unread := dec.UnreadBuffer()
	i := 0
	for i < len(unread) && (unread[i] == ' ' || unread[i] == '\t' || unread[i] == '\n' || unread[i] == '\r' || unread[i] == ':') {
		i++
	}
	return dec.InputOffset() + int64(i)
}

func syntaxError(err error, offset int64) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return &SyntaxError{Offset: se.ByteOffset, Msg: se.Err.Error()}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &SyntaxError{Offset: offset, Msg: "the file ends inside a value"}
	}
	return err
}

// withLine fills in the line and column of a *SyntaxError from the
// document's bytes.
func withLine(err error, r io.ReaderAt) error {
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset <= 0 {
		return err
	}
	line, col := 1, 1
	buf := make([]byte, 64<<10)
	for off := int64(0); off < se.Offset; {
		n, rerr := r.ReadAt(buf[:min(int64(len(buf)), se.Offset-off)], off)
		for _, c := range buf[:n] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		off += int64(n)
		if rerr != nil || n == 0 {
			break
		}
	}
	se.Line, se.Column = line, col
	return err
}

// plan turns edits into splices, given the spans located and the
// document (for its whitespace).
func plan(doc io.ReaderAt, size int64, spans map[string]*objectSpan, edits []jsonEdit) ([]splice, error) {
	layout := detectLayout(doc, spans[""])
	var out []splice
	byObject := map[string][]jsonEdit{}
	var order []string
	for _, e := range edits {
		// The deepest object of the path that exists.
		depth := len(e.path)
		for depth > 0 && spans[strings.Join(e.path[:depth], "\x00")] == nil {
			depth--
		}
		if depth < len(e.path) { // objects to create
			if e.value == nil {
				continue // nothing to remove
			}
			inner := []member{{e.name, e.value}}
			for d := len(e.path); d > depth; d-- {
				var before, after []member
				if e.create != nil {
					before, after = e.create(d)
				}
				ms := append(append(before, inner...), after...)
				inner = []member{{e.path[d-1], objectText(ms)}}
			}
			e = jsonEdit{path: e.path[:depth], name: inner[0].name, value: inner[0].value}
		}
		key := strings.Join(e.path, "\x00")
		if _, ok := byObject[key]; !ok {
			order = append(order, key)
		}
		byObject[key] = append(byObject[key], e)
	}
	for _, key := range order {
		span := spans[key]
		s, err := planObject(doc, span, byObject[key], layout)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	slices.SortFunc(out, func(a, b splice) int { return int(a.from - b.from) })
	for i := 1; i < len(out); i++ {
		if out[i].from < out[i-1].to {
			return nil, errors.New("config: overlapping edits") // a bug, not the file's
		}
	}
	return out, nil
}

// layout is how the document is indented: one unit per level, or none (a
// document on one line).
type layout struct {
	unit  string
	lines bool
	nl    string // "\n", or "\r\n" in a file written so
}

func detectLayout(doc io.ReaderAt, root *objectSpan) layout {
	l := layout{unit: "  ", lines: true, nl: "\n"}
	if root == nil {
		return l
	}
	if bytes.Contains(readSpan(doc, root.open, min(root.close+1, root.open+4096)), []byte("\r\n")) {
		l.nl = "\r\n"
	}
	if len(root.members) == 0 {
		sep := readSpan(doc, root.open+1, root.close)
		l.lines = root.close-root.open > 1 && bytes.ContainsRune(sep, '\n')
		return l
	}
	sep := readSpan(doc, root.open+1, root.members[0].nameStart)
	if i := bytes.LastIndexByte(sep, '\n'); i >= 0 {
		if ind := string(sep[i+1:]); strings.Trim(ind, " \t") == "" && ind != "" {
			l.unit = ind
		}
		return l
	}
	l.lines = false
	return l
}

// readSpan reads the bytes [from, to) of the document, at most 4 KiB of
// them (whitespace between tokens, in practice).
func readSpan(doc io.ReaderAt, from, to int64) []byte {
	if to-from > 4096 {
		from = to - 4096
	}
	if to <= from {
		return nil
	}
	b := make([]byte, to-from)
	n, _ := doc.ReadAt(b, from)
	return b[:n]
}

// lineIndent is the whitespace that begins the line holding offset.
func lineIndent(doc io.ReaderAt, offset int64) string {
	before := readSpan(doc, max(0, offset-4096), offset)
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	n := 0
	for n < len(before) && (before[n] == ' ' || before[n] == '\t') {
		n++
	}
	return string(before[:n])
}

// planObject gives the splices of the edits of one object.
func planObject(doc io.ReaderAt, span *objectSpan, edits []jsonEdit, l layout) ([]splice, error) {
	indent := lineIndent(doc, span.open)
	child := indent + l.unit
	if len(span.members) > 0 {
		// The object's own layout: its members on lines of their own or
		// not, and its indentation.
		sep := readSpan(doc, span.open+1, span.members[0].nameStart)
		l.lines = bytes.ContainsRune(sep, '\n')
		if l.lines {
			child = lineIndent(doc, span.members[0].nameStart)
			if u, ok := strings.CutPrefix(child, indent); ok && u != "" {
				l.unit = u
			}
		}
	}
	// What happens to each member: removed (every one of a name removed,
	// and every one but the last of a name set), or its value replaced.
	removed := make([]bool, len(span.members))
	replace := map[int]json.RawMessage{}
	var added []member
	for _, e := range edits {
		last := -1
		for i, m := range span.members {
			if m.name == e.name {
				if last >= 0 {
					removed[last] = true
				}
				last = i
			}
		}
		switch {
		case e.value == nil && last >= 0:
			removed[last] = true
		case e.value != nil && last >= 0:
			replace[last] = e.value
		case e.value != nil:
			added = append(added, member{e.name, e.value})
		}
	}
	format := func(v json.RawMessage, prefix string) []byte {
		if !l.lines {
			return v
		}
		var b bytes.Buffer
		if err := json.Indent(&b, v, prefix, l.unit); err != nil {
			return v
		}
		if l.nl != "\n" {
			return bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte(l.nl))
		}
		return b.Bytes()
	}
	memberText := func(m member) []byte {
		name, _ := jsontext.AppendQuote(nil, m.name)
		sep := ": "
		if !l.lines {
			sep = ":"
		}
		return append(append(name, sep...), format(m.value, child)...)
	}
	var out []splice
	firstRemoved := -1 // a run of removed members before the first kept one
	lastKept := -1
	for i, m := range span.members {
		switch {
		case removed[i] && lastKept >= 0:
			out = append(out, splice{from: span.members[i-1].valueEnd, to: m.valueEnd})
		case removed[i]:
			if firstRemoved < 0 {
				firstRemoved = i
			}
		default:
			if firstRemoved >= 0 {
				out = append(out, splice{from: span.members[firstRemoved].nameStart, to: m.nameStart})
				firstRemoved = -1
			}
			lastKept = i
			if v, ok := replace[i]; ok {
				out = append(out, splice{from: m.valueStart, to: m.valueEnd, text: format(v, child)})
			}
		}
	}
	if lastKept < 0 { // every member removed, or none there
		var b []byte
		for i, m := range added {
			if i > 0 {
				b = append(b, ',')
			}
			if l.lines {
				b = append(append(b, l.nl...), child...)
			}
			b = append(b, memberText(m)...)
		}
		if len(added) > 0 && l.lines {
			b = append(append(b, l.nl...), indent...)
		}
		return append(out, splice{from: span.open + 1, to: span.close, text: b}), nil
	}
	if len(added) > 0 {
		var b []byte
		for _, m := range added {
			b = append(b, ',')
			if l.lines {
				b = append(append(b, l.nl...), child...)
			}
			b = append(b, memberText(m)...)
		}
		at := span.members[lastKept].valueEnd
		out = append(out, splice{from: at, to: at, text: b})
	}
	return out, nil
}

// objectText is a compact JSON object of the members, in order.
func objectText(ms []member) json.RawMessage {
	b := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, m.name)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// apply writes the document with the splices (sorted, apart) to w.
func apply(w io.Writer, doc io.ReaderAt, size int64, splices []splice) error {
	at := int64(0)
	for _, s := range splices {
		if _, err := io.Copy(w, io.NewSectionReader(doc, at, s.from-at)); err != nil {
			return err
		}
		if _, err := w.Write(s.text); err != nil {
			return err
		}
		at = s.to
	}
	_, err := io.Copy(w, io.NewSectionReader(doc, at, size-at))
	return err
}
