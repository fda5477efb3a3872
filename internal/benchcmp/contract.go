package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The contract floor: the floor plus exactly what mcplug's contract asks
// of a call, and nothing else. The arguments are encoded from the Go map
// as encoding/json encodes it (sorted keys, HTML-safe strings, invalid
// UTF-8 made \ufffd), and the answer is decoded as encoding/json would
// decode it into a result of owned strings: escapes decoded, control
// characters refused, invalid UTF-8 made U+FFFD, the whole message
// checked. Both are written by hand for the shapes a call has, and hand
// anything else to encoding/json, so that they never differ from it
// (contract_test.go checks them byte for byte, and fuzzes them).

// contractResult is a tools/call result as the contract hands it over.
type contractResult struct {
	Content []contractContent `json:"content"`
	IsError bool              `json:"isError"`
}

type contractContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// contractTools is a tools/list result as the contract hands it over.
type contractTools struct {
	Tools []contractTool `json:"tools"`
}

type contractTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// --- encoding

// appendContractArgs appends args as encoding/json encodes the map.
func appendContractArgs(b []byte, args map[string]any) []byte {
	if len(args) > 16 {
		return appendMarshal(b, args)
	}
	var arr [16]string
	keys := arr[:0]
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	start := len(b)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendContractValue(b, args[k]); !ok {
			return appendMarshal(b[:start], args)
		}
	}
	return append(b, '}')
}

// appendMarshal appends what encoding/json makes of v ("null" if it
// fails: the floor's callers pass what encodes).
func appendMarshal(b []byte, v any) []byte {
	enc, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}

// appendContractValue appends the scalars arguments usually are; false
// for anything else.
func appendContractValue(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case string:
		return appendJSONString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case nil:
		return append(b, "null"...), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case float64:
		return appendJSONFloat(b, v)
	}
	return b, false
}

// appendJSONFloat appends f as encoding/json writes a float64.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 is written e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as encoding/json writes a string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// --- decoding

// decodeContractResult decodes a tools/call result as json.Unmarshal
// would into a contractResult.
func decodeContractResult(raw []byte) (*contractResult, error) {
	res := &contractResult{}
	d := contractDecoder{data: raw}
	if d.result(res) && d.end() {
		return res, nil
	}
	res = &contractResult{}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// decodeContractTools decodes a tools/list result as json.Unmarshal would
// into a contractTools.
func decodeContractTools(raw []byte) (*contractTools, error) {
	res := &contractTools{}
	d := contractDecoder{data: raw}
	if d.tools(res) && d.end() {
		return res, nil
	}
	res = &contractTools{}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

var (
	// errResponse is the answer of a response that carries an error.
	errResponse = errors.New("contract floor: the server answered with an error")
	errNoResult = errors.New("contract floor: no result in the response")
)

// decodeResponse checks a whole response line as encoding/json would, and
// decodes its result member into into (a *contractResult or a
// *contractTools) in the same pass. When the line is not of the shape it
// reads, encoding/json reads it all.
func decodeResponse(line []byte, into any) error {
	d := contractDecoder{data: line}
	var seen fields
	found, failed := false, false
	ok := d.members(func(key []byte) bool {
		switch string(key) {
		case "result":
			if !seen.known(key, 1) {
				return false
			}
			found = true
			switch v := into.(type) {
			case *contractResult:
				return d.result(v)
			case *contractTools:
				return d.tools(v)
			}
			return false
		case "error":
			if !seen.known(key, 2) {
				return false
			}
			failed = true
		default:
			if !seen.known(key, 0, "result", "error") {
				return false
			}
		}
		return d.skip(0)
	}) && d.end()
	if !ok {
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &env); err != nil {
			return err
		}
		found, failed = env.Result != nil, env.Error != nil
		if found && !failed {
			switch v := into.(type) { // what the hand-written pass left
			case *contractResult:
				*v = contractResult{}
			case *contractTools:
				*v = contractTools{}
			}
			return json.Unmarshal(env.Result, into)
		}
	}
	switch {
	case failed:
		return errResponse
	case !found:
		return errNoResult
	}
	return nil
}

// contractDecoder reads the shapes a result has, checking everything as
// encoding/json's scanner does. Any method that returns false means "not
// sure": the caller hands the whole value to encoding/json.
type contractDecoder struct {
	data []byte
	pos  int
}

func (d *contractDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// end reports whether nothing but space follows.
func (d *contractDecoder) end() bool {
	d.space()
	return d.pos == len(d.data)
}

// members walks an object, calling member with each key (its raw bytes,
// plain ASCII without escapes) with d.pos at its value; member reads the
// value. A key encoding/json might read otherwise (an escape, a byte
// from 0x80) is not walked.
func (d *contractDecoder) members(member func(key []byte) bool) bool {
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		return false
	}
	return d.object(d.plainKey, member)
}

// plainKey reads the key at d.pos, a string of plain ASCII without
// escapes, and returns its bytes.
func (d *contractDecoder) plainKey() ([]byte, bool) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, false
	}
	start := d.pos + 1
	i := start
	for i < len(d.data) && d.data[i] != '"' {
		if c := d.data[i]; c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			return nil, false
		}
		i++
	}
	if i >= len(d.data) {
		return nil, false
	}
	d.pos = i + 1
	return d.data[start:i], true
}

// object walks the object whose '{' is at d.pos: key reads each key,
// member its value, with d.pos at it.
func (d *contractDecoder) object(key func() ([]byte, bool), member func(key []byte) bool) bool {
	d.pos++ // {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return true
	}
	for {
		d.space()
		k, ok := key()
		if !ok {
			return false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return false
		}
		d.pos++
		d.space()
		if !member(k) {
			return false
		}
		d.space()
		if d.pos >= len(d.data) {
			return false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return true
		default:
			return false
		}
	}
}

// elements walks an array, calling element with d.pos at each element.
func (d *contractDecoder) elements(element func() bool) bool {
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '[' {
		return false
	}
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return true
	}
	for {
		d.space()
		if !element() {
			return false
		}
		d.space()
		if d.pos >= len(d.data) {
			return false
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return true
		default:
			return false
		}
	}
}

// fields tells, for an object's known keys, which were seen: a key seen
// twice, or one that differs from a known key only by case (encoding/json
// matches those too), is left to encoding/json.
type fields uint8

// known reports whether key may be read here: bit is its field's, or 0 for
// a key that is none of names (then it must not fold to one of them).
func (f *fields) known(key []byte, bit fields, names ...string) bool {
	if bit == 0 {
		for _, n := range names {
			if asciiEqualFold(key, n) {
				return false
			}
		}
		return true
	}
	if *f&bit != 0 {
		return false
	}
	*f |= bit
	return true
}

func asciiEqualFold(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

func (d *contractDecoder) result(res *contractResult) bool {
	var seen fields
	return d.members(func(key []byte) bool {
		switch string(key) {
		case "content":
			if !seen.known(key, 1) {
				return false
			}
			if d.literal("null") {
				res.Content = nil
				return true
			}
			res.Content = make([]contractContent, 0, 1)
			return d.elements(func() bool {
				res.Content = append(res.Content, contractContent{})
				return d.content(&res.Content[len(res.Content)-1])
			})
		case "isError":
			if !seen.known(key, 2) {
				return false
			}
			switch {
			case d.literal("true"):
				res.IsError = true
			case d.literal("false"):
				res.IsError = false
			default:
				return d.literal("null")
			}
			return true
		}
		return seen.known(key, 0, "content", "isError") && d.skip(0)
	})
}

func (d *contractDecoder) content(c *contractContent) bool {
	if d.literal("null") {
		return true
	}
	var seen fields
	return d.members(func(key []byte) bool {
		switch string(key) {
		case "type":
			return seen.known(key, 1) && d.stringOrNull(&c.Type)
		case "text":
			return seen.known(key, 2) && d.stringOrNull(&c.Text)
		}
		return seen.known(key, 0, "type", "text") && d.skip(0)
	})
}

func (d *contractDecoder) tools(res *contractTools) bool {
	var seen fields
	return d.members(func(key []byte) bool {
		if string(key) != "tools" {
			return seen.known(key, 0, "tools") && d.skip(0)
		}
		if !seen.known(key, 1) {
			return false
		}
		if d.literal("null") {
			res.Tools = nil
			return true
		}
		res.Tools = make([]contractTool, 0, 4)
		return d.elements(func() bool {
			res.Tools = append(res.Tools, contractTool{})
			return d.tool(&res.Tools[len(res.Tools)-1])
		})
	})
}

func (d *contractDecoder) tool(t *contractTool) bool {
	if d.literal("null") {
		return true
	}
	var seen fields
	return d.members(func(key []byte) bool {
		switch string(key) {
		case "name":
			return seen.known(key, 1) && d.stringOrNull(&t.Name)
		case "title":
			return seen.known(key, 2) && d.stringOrNull(&t.Title)
		case "description":
			return seen.known(key, 4) && d.stringOrNull(&t.Description)
		case "inputSchema":
			return seen.known(key, 8) && d.raw(&t.InputSchema)
		case "outputSchema":
			return seen.known(key, 16) && d.raw(&t.OutputSchema)
		}
		return seen.known(key, 0, "name", "title", "description", "inputSchema", "outputSchema") && d.skip(0)
	})
}

// raw copies an object or an array as json.RawMessage keeps it.
func (d *contractDecoder) raw(dst *json.RawMessage) bool {
	if d.pos >= len(d.data) || (d.data[d.pos] != '{' && d.data[d.pos] != '[') {
		return false // null and the scalars: encoding/json's own rules
	}
	start := d.pos
	if !d.skip(0) {
		return false
	}
	*dst = append(json.RawMessage(nil), d.data[start:d.pos]...)
	return true
}

// literal consumes word if it is next.
func (d *contractDecoder) literal(word string) bool {
	if len(d.data)-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	return false
}

// stringOrNull decodes a string into *dst; null leaves it as it is.
func (d *contractDecoder) stringOrNull(dst *string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.str()
	if ok {
		*dst = s
	}
	return ok
}

// str decodes the string at d.pos as encoding/json does: a string of its
// own, escapes decoded, invalid UTF-8 made U+FFFD; a control character or
// a bad escape is not read. Long runs are crossed a word at a time and
// copied whole, once.
func (d *contractDecoder) str() (string, bool) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return "", false
	}
	start := d.pos + 1
	i := start + plainPrefix(d.data[start:])
	if i < len(d.data) && d.data[i] == '"' {
		d.pos = i + 1
		return string(d.data[start:i]), true
	}
	end := stringEnd(d.data, i)
	if end < 0 {
		return "", false
	}
	b := make([]byte, 0, end-start)
	b = append(b, d.data[start:i]...)
	for i < end {
		run := d.data[i:end]
		if j := bytes.IndexByte(run, '\\'); j >= 0 {
			run = run[:j]
		}
		k := plainPrefix(run)
		b = append(b, run[:k]...)
		for k < len(run) { // what is not printable ASCII
			c := run[k]
			switch {
			case c < 0x20:
				return "", false
			case c < utf8.RuneSelf:
				b = append(b, c)
				k++
			default:
				r, size := utf8.DecodeRune(run[k:])
				b = utf8.AppendRune(b, r) // RuneError for a bad byte, as encoding/json
				k += size
			}
		}
		i += len(run)
		if i == end {
			break
		}
		// An escape at i.
		switch e := d.data[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(d.data[i+2 : end])
			if r < 0 {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if end-i >= 6 && d.data[i] == '\\' && d.data[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, hex4(d.data[i+2:end])); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	d.pos = end + 1
	// b is this string's own and is not written again, as in
	// strings.Builder.
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// stringEnd returns the index of the quote that ends the string whose
// bytes go on at data[from:] (no backslash escapes data[from]), or -1.
func stringEnd(data []byte, from int) int {
	for i := from; ; {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		n := 0 // the backslashes just before the quote
		for j := i - 1; j >= from && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i
		}
		i++
	}
}

// plainPrefix returns how many bytes of b, from its start, are printable
// ASCII other than the quote and the backslash: eight at a time.
func plainPrefix(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		if (x-ones*0x20)&^x&highs|x&highs|(quote-ones)&^quote&highs|(backslash-ones)&^backslash&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// hex4 is the value of four hex digits, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// maxDepth bounds the nesting skip follows; deeper is left to
// encoding/json (whose own limit is 10000).
const maxDepth = 1000

// skip steps over the value at d.pos, checking it as encoding/json's
// scanner does.
func (d *contractDecoder) skip(depth int) bool {
	if d.pos >= len(d.data) || depth > maxDepth {
		return false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.membersAny(depth)
	case c == '[':
		return d.elements(func() bool { return d.skip(depth + 1) })
	case c == '"':
		return d.skipString()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return false
}

// membersAny steps over an object whatever its keys.
func (d *contractDecoder) membersAny(depth int) bool {
	return d.object(func() ([]byte, bool) { return nil, d.skipString() }, func([]byte) bool { return d.skip(depth + 1) })
}

// skipString steps over a string, checking its escapes and that it holds
// no control character.
func (d *contractDecoder) skipString() bool {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return false
	}
	start := d.pos + 1
	end := stringEnd(d.data, start)
	if end < 0 {
		return false
	}
	for i := start; i < end; {
		i += plainPrefix(d.data[i:end])
		if i == end {
			break
		}
		switch c := d.data[i]; {
		case c < 0x20:
			return false
		case c == '\\':
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(d.data[i+2:end]) < 0 {
					return false
				}
				i += 6
			default:
				return false
			}
		default: // from 0x80: any byte goes (encoding/json replaces the bad ones)
			i++
		}
	}
	d.pos = end + 1
	return true
}

// number steps over a number as JSON writes one.
func (d *contractDecoder) number() bool {
	i := d.pos
	digits := func() bool {
		start := i
		for i < len(d.data) && '0' <= d.data[i] && d.data[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(d.data) && d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	d.pos = i
	return true
}
