// Package toolsearch ranks tools for a query, so that an agent can hold
// hundreds of MCP tools and send the model only those it looks for.
//
//	idx := toolsearch.New(tools)
//	for _, r := range idx.Search("open a pull request", 5) {
//		fmt.Println(r.Tool.Name, r.Score)
//	}
//
// Ranking is BM25F: each tool is a document with fields of their own
// weight (its name, title, description, argument names and argument
// descriptions), words are split at case changes, digits, '_', '-', '.'
// and every other non-letter ("listPullRequests", "list_pull_requests"
// and "list-pull-requests" all give list, pull, requests) and stemmed
// (Snowball English), and common English words are left out. A query
// "select:a,b" picks tools by exact name instead.
package toolsearch

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcplug/mcplug/mcp"
)

// Field weights: what the name and title say counts most.
const (
	weightName        = 3.0
	weightTitle       = 2.0
	weightDescription = 1.0
	weightArgName     = 1.5
	weightArgDesc     = 0.5
)

// BM25 parameters.
const (
	k1 = 1.2
	b  = 0.75
)

// Bounds on what one tool adds to the index: a server's description or
// schema may be large, and is the server's to choose.
const (
	maxTextBytes = 16 << 10 // of one field
	maxArgs      = 64       // argument names and descriptions taken, depth first
	maxDepth     = 4        // of nested argument objects
)

// Index is a search index over a tool list. It is safe for concurrent
// use once built; build a new one when the list changes.
type Index struct {
	tools    []mcp.Tool
	byName   map[string]int
	termIDs  map[string]int32 // a stem's place in postings
	postings [][]posting      // per term: the tools that have it
	length   []float64        // per tool: weighted length
	avgLen   float64
}

// posting is a tool that has a term, and the term's weighted frequency
// there.
type posting struct {
	doc int32
	tf  float32
}

// Result is a tool and its score for a query; higher is better.
type Result struct {
	Tool  mcp.Tool
	Score float64
}

// New indexes tools (by their Name, as the agent exposes them).
func New(tools []mcp.Tool) *Index {
	idx := &Index{tools: tools, byName: make(map[string]int, len(tools)), length: make([]float64, len(tools))}
	v := vocabCache.take() // words repeat across tools and lists: split and stem each once
	defer vocabCache.give(v)
	docs := make([]*doc, len(tools))
	for i := range tools {
		docs[i] = v.weigh(&tools[i])
	}
	// Give the terms these tools have ids of the index's own, and count
	// each term's tools first, so that all postings share one array.
	local := make([]int32, len(v.terms)) // a term of v → its id here, plus one
	var df []int32
	var terms []int32 // per id here: the term of v
	all := 0
	for _, d := range docs {
		for _, tw := range d.terms {
			id := local[tw.term] - 1
			if id < 0 {
				id = int32(len(df))
				local[tw.term] = id + 1
				df = append(df, 0)
				terms = append(terms, tw.term)
			}
			df[id]++
		}
		all += len(d.terms)
	}
	idx.termIDs = make(map[string]int32, len(terms))
	for id, term := range terms {
		idx.termIDs[v.terms[term]] = int32(id)
	}
	backing := make([]posting, all)
	idx.postings = make([][]posting, len(df))
	at := 0
	for id, n := range df {
		idx.postings[id] = backing[at : at : at+int(n)]
		at += int(n)
	}
	total := 0.0
	for i, t := range tools {
		idx.byName[t.Name] = i
		d := docs[i]
		for _, tw := range d.terms {
			id := local[tw.term] - 1
			idx.postings[id] = append(idx.postings[id], posting{doc: int32(i), tf: tw.tf})
		}
		idx.length[i] = d.length
		total += d.length
	}
	if len(tools) > 0 {
		idx.avgLen = total / float64(len(tools))
	}
	return idx
}

// doc is what a tool weighs in the index: its terms with their weighted
// frequencies, and its weighted length.
type doc struct {
	terms  []termWeight
	length float64
}

type termWeight struct {
	term int32 // in the vocabulary that weighed the tool
	tf   float32
}

// vocab is what the indexes of a program have learned, kept for the next
// (a tool list changes a little at a time, and each server's list is
// asked for again after every change): the words met and their terms,
// and what each tool weighed. It holds at most maxWords words and
// maxDocs tools; past either it is forgotten whole.
type vocab struct {
	seed   maphash.Seed
	words  wordTable        // a word (as written, and in lower case) → its term, -1 when left out
	terms  []string         // per term: its stem
	stemID map[string]int32 // a stem → its term
	docs   map[uint64]*doc  // by docKey
	nWords int

	// what weigh reuses from one tool to the next
	tf           []float64 // per term: its weight in the tool being weighed
	ordered      []int32   // the terms the tool being weighed has, in order met
	names, descs []byte    // what arguments reuses
	stemmer      stemmer
}

const (
	maxWords = 1 << 16
	maxDocs  = 1 << 13
)

// wordsHint is how many different words a program is expected to meet:
// the tables that hold them start that large (634 tools of 47 servers
// have 5,156 as written, 3,887 in lower case).
const wordsHint = 1 << 13

func newVocab() *vocab {
	v := &vocab{seed: maphash.MakeSeed(), stemID: make(map[string]int32, wordsHint/2), docs: map[uint64]*doc{}}
	v.words.init(v.seed, wordsHint)
	return v
}

// vocabCache keeps a program's vocabulary for its next index.
var vocabCache vocabs

type vocabs struct {
	mu sync.Mutex
	v  *vocab
}

// take gives the vocabulary to one New at a time (another gets one of
// its own meanwhile).
func (c *vocabs) take() *vocab {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.v
	c.v = nil
	if v == nil || v.nWords > maxWords || len(v.docs) > maxDocs {
		v = newVocab()
	}
	return v
}

func (c *vocabs) give(v *vocab) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v == nil || len(v.docs) > len(c.v.docs) {
		c.v = v
	}
}

// weigh splits and weighs the fields of t, or gives what t weighed before.
func (v *vocab) weigh(t *mcp.Tool) *doc {
	key := docKey(v.seed, t)
	if d, ok := v.docs[key]; ok {
		return d
	}
	d := &doc{}
	add := func(text string, w float64) {
		if len(text) > maxTextBytes {
			text = text[:maxTextBytes]
		}
		eachWord(text, func(word string) {
			term := v.term(word)
			if term < 0 {
				return
			}
			if v.tf[term] == 0 {
				v.ordered = append(v.ordered, term)
			}
			v.tf[term] += w
			d.length += w
		})
	}
	add(t.Name, weightName)
	add(t.Title, weightTitle)
	if t.Annotations != nil {
		add(t.Annotations.Title, weightTitle)
	}
	add(t.Description, weightDescription)
	names, descs := v.arguments(t.InputSchema)
	add(names, weightArgName)
	add(descs, weightArgDesc)
	d.terms = make([]termWeight, len(v.ordered))
	for i, term := range v.ordered {
		d.terms[i] = termWeight{term, float32(v.tf[term])}
		v.tf[term] = 0
	}
	v.ordered = v.ordered[:0]
	v.docs[key] = d
	return d
}

// term is the term of word, as written (-1 for a word left out): a word
// met for the first time is looked up in lower case, and a lower-case
// word met for the first time is stemmed.
func (v *vocab) term(word string) int32 {
	h := v.words.hash(word)
	if term, ok := v.words.get(h); ok {
		return term
	}
	lw := strings.ToLower(word) // word itself when it has no capitals
	lh := h
	if lw != word {
		lh = v.words.hash(lw)
	}
	term, ok := v.words.get(lh)
	if !ok {
		term = -1
		if stem := v.stemmer.stem(lw); stem != "" {
			if term, ok = v.stemID[stem]; !ok {
				term = int32(len(v.terms))
				v.stemID[stem] = term
				v.terms = append(v.terms, stem)
				v.tf = append(v.tf, 0)
			}
		}
		v.words.put(lh, term)
		v.nWords++
	}
	if lh != h {
		v.words.put(h, term)
		v.nWords++
	}
	return term
}

// wordTable maps words to terms by a 64-bit hash of the word with a seed
// of its own: two words are taken for one only if their hashes collide,
// which for the words of a vocabulary (at most maxWords) is as likely as
// 1 in 10^10, and a server cannot aim for it without knowing the seed
// (docKey makes the same bet). It is an open-addressed table: cheaper
// than a map of strings for the tens of thousands of words a build
// looks up, and it keeps no word.
type wordTable struct {
	seed  maphash.Seed
	slots []wordSlot // a power of two long, at most half full
	n     int
}

type wordSlot struct {
	h    uint64 // 0 for an empty slot
	term int32
}

func (t *wordTable) init(seed maphash.Seed, n int) {
	t.seed = seed
	t.slots = make([]wordSlot, 2*n)
	t.n = 0
}

// hash is the key of word: never 0.
func (t *wordTable) hash(word string) uint64 { return maphash.String(t.seed, word) | 1 }

func (t *wordTable) get(h uint64) (int32, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.slots[i].h {
		case h:
			return t.slots[i].term, true
		case 0:
			return 0, false
		}
	}
}

// put adds the key h, not in t.
func (t *wordTable) put(h uint64, term int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]wordSlot, 2*len(old))
		for _, s := range old {
			if s.h != 0 {
				t.place(s)
			}
		}
	}
	t.place(wordSlot{h, term})
	t.n++
}

func (t *wordTable) place(s wordSlot) {
	mask := uint64(len(t.slots) - 1)
	i := s.h & mask
	for t.slots[i].h != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// docKey tells apart tools whose indexed fields differ.
func docKey(seed maphash.Seed, t *mcp.Tool) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(t.Name)
	h.WriteByte(0)
	h.WriteString(t.Title)
	h.WriteByte(0)
	if t.Annotations != nil {
		h.WriteString(t.Annotations.Title)
	}
	h.WriteByte(0)
	h.WriteString(t.Description)
	h.WriteByte(0)
	h.Write(t.InputSchema)
	return h.Sum64()
}

// Len is the number of tools indexed.
func (idx *Index) Len() int { return len(idx.tools) }

// Search returns at most k tools for query, best first; none score zero.
// A query "select:name1,name2" returns those tools, by exact name, in that
// order (names it does not know are left out).
func (idx *Index) Search(query string, k int) []Result {
	if k <= 0 {
		return nil
	}
	if names, ok := strings.CutPrefix(strings.TrimSpace(query), "select:"); ok {
		var out []Result
		for _, n := range strings.Split(names, ",") {
			if i, ok := idx.byName[strings.TrimSpace(n)]; ok && len(out) < k {
				out = append(out, Result{Tool: idx.tools[i], Score: 1})
			}
		}
		return out
	}
	qterms := Terms(query)
	if len(qterms) == 0 || len(idx.tools) == 0 {
		return nil
	}
	slices.Sort(qterms)
	qterms = slices.Compact(qterms)
	n := float64(len(idx.tools))
	scores := map[int32]float64{}
	for _, term := range qterms {
		id, ok := idx.termIDs[term]
		if !ok {
			continue
		}
		ps := idx.postings[id]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*idx.length[p.doc]/idx.avgLen))
		}
	}
	out := make([]Result, 0, len(scores))
	for d, score := range scores {
		out = append(out, Result{Tool: idx.tools[d], Score: score})
	}
	slices.SortStableFunc(out, func(x, y Result) int {
		switch {
		case x.Score > y.Score:
			return -1
		case x.Score < y.Score:
			return 1
		}
		return strings.Compare(x.Tool.Name, y.Tool.Name)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// Terms splits text into the index's terms: words split at case changes,
// digits and non-letters, lower-cased, stemmed, common words left out.
func Terms(text string) []string {
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	var out []string
	var st stemmer
	eachWord(text, func(w string) {
		if stem := st.stem(strings.ToLower(w)); stem != "" {
			out = append(out, stem)
		}
	})
	return out
}

// stemmer stems words with one Snowball environment, reused.
type stemmer struct{ env *snowballstem.Env }

// stem is the term of the lower-case word lw: stemmed, or "" for a word
// left out (shorter than two letters, or common).
func (st *stemmer) stem(lw string) string {
	stem := ""
	switch {
	case len(lw) < 2 || isStopWord(lw):
	case len(lw) == 2 || byteClass[lw[0]] == digit:
		stem = lw // what Snowball English leaves as it is: two letters, or digits
	default:
		if st.env == nil {
			st.env = snowballstem.NewEnv(lw)
		} else {
			st.env.SetCurrent(lw)
		}
		english.Stem(st.env)
		stem = st.env.Current()
	}
	return stem
}

// eachWord calls fn with the words of s, substrings of it: s is split at
// non-letters and non-digits, and within a run of letters at a change
// from lower to upper case ("pullRequest", and "HTTPServer" as HTTP,
// Server) and between letters and digits. ASCII is read a byte at a
// time through a table; other runes are classed by package unicode.
func eachWord(s string, fn func(string)) {
	start, prevAt := -1, 0 // where the word and prev began
	prev, prevPrev := other, other
	for i := 0; i < len(s); {
		c, size := byteClass[s[i]], 1
		if c == nonASCII {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			c = classOf(r)
		}
		switch {
		case c == other:
			if start >= 0 {
				fn(s[start:i])
			}
			start, prev, prevPrev = -1, other, other
			i += size
			for i < len(s) && byteClass[s[i]] == other { // the rest of a run of ASCII non-letters
				i++
			}
			continue
		case start < 0:
			start = i
		case (c == digit) != (prev == digit):
			fn(s[start:i])
			start = i
		case c == upper && prev == lower:
			fn(s[start:i])
			start = i
		case prev == upper && c == lower && prevAt > start && prevPrev == upper:
			// "HTTPServer": the last capital begins the next word.
			fn(s[start:prevAt])
			start = prevAt
		}
		prevPrev, prev, prevAt = prev, c, i
		i += size
		if c == lower || c == digit {
			// The rest of a run of ASCII lower-case letters or digits
			// changes nothing but where the run's last byte is.
			j := i
			for j < len(s) && byteClass[s[j]] == c {
				j++
			}
			if j > i {
				prevPrev, prevAt, i = c, j-1, j
			}
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// A character's class, to eachWord: a letter without case (as in most
// scripts) is neither lower nor upper.
const (
	other uint8 = iota
	lower
	upper
	digit
	caseless
	nonASCII // to byteClass: the byte begins or continues a rune beyond ASCII
)

// byteClass is the class of each ASCII byte, and nonASCII for the bytes
// of other runes.
var byteClass = func() (t [256]uint8) {
	for c := range t {
		t[c] = nonASCII
		if c < utf8.RuneSelf {
			t[c] = classOf(rune(c))
		}
	}
	return t
}()

func classOf(r rune) uint8 {
	switch {
	case unicode.IsDigit(r):
		return digit
	case !unicode.IsLetter(r):
		return other
	case unicode.IsUpper(r):
		return upper
	case unicode.IsLower(r):
		return lower
	}
	return caseless
}

// arguments returns the argument names and descriptions of an input
// schema, as text: the member names of every "properties" object of the
// schema (nested ones too, within maxDepth) and the "description" of each
// such argument, at most maxArgs. It reads the schema's tokens once,
// without decoding it into values; it stops at a syntax error.
func arguments(schema json.RawMessage) (names, descs string) {
	var v vocab
	return v.arguments(schema)
}

// member is what a member's name says about its value, to arguments.
type member uint8

const (
	otherMember member = iota
	propertiesMember
	descriptionMember
)

// arguments is the package's arguments, with the buffers of v reused.
func (v *vocab) arguments(schema json.RawMessage) (names, descs string) {
	w := argWalk{b: schema, names: v.names[:0], descs: v.descs[:0]}
	w.i = skipSpace(w.b, 0)
	if w.i < len(w.b) {
		switch w.b[w.i] {
		case '{':
			w.object(1, false, false)
		case '[':
			w.array(1)
		}
	}
	v.names, v.descs = w.names, w.descs
	return string(w.names), string(w.descs)
}

// argWalk reads a schema for arguments: a walk down its objects and
// arrays that steps over everything else, a byte at a time only where
// the structure is (a string is skipped to its closing quote at once).
// Each method reports false at a syntax error, where the walk ends.
type argWalk struct {
	b            []byte
	i            int // the next byte to read
	names, descs []byte
	count        int // names taken
}

// maxOpen is how many objects and arrays the walk is in at most: a
// deeper value is stepped over whole.
const maxOpen = 2*maxDepth + 2

// object walks the object at w.i, depth deep (counting itself): its
// member names are arguments when props, and its "description" describes
// one when arg.
func (w *argWalk) object(depth int, props, arg bool) bool {
	w.i = skipSpace(w.b, w.i+1)
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		return true
	}
	for {
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return false
		}
		end := stringEnd(w.b, w.i)
		if end < 0 {
			return false
		}
		raw := w.b[w.i : end+1]
		name := memberOf(raw)
		if props && w.count < maxArgs {
			w.count++
			w.names = appendUnquoted(w.names, raw)
			w.names = append(w.names, ' ')
		}
		w.i = skipSpace(w.b, end+1)
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return false
		}
		w.i = skipSpace(w.b, w.i+1)
		if w.i >= len(w.b) {
			return false
		}
		switch w.b[w.i] {
		case '{':
			if !w.nested(depth, func() bool { return w.object(depth+1, name == propertiesMember && !props, props) }) {
				return false
			}
		case '[':
			if !w.nested(depth, func() bool { return w.array(depth + 1) }) {
				return false
			}
		case '"':
			end := stringEnd(w.b, w.i)
			if end < 0 {
				return false
			}
			if arg && name == descriptionMember {
				w.descs = appendUnquoted(w.descs, w.b[w.i:end+1])
				w.descs = append(w.descs, ' ')
			}
			w.i = end + 1
		default:
			if !w.literal() {
				return false
			}
		}
		if !w.next('}') {
			return false
		}
		if w.b[w.i-1] == '}' {
			return true
		}
	}
}

// array walks the array at w.i, depth deep: what is in it is neither an
// argument nor a description.
func (w *argWalk) array(depth int) bool {
	w.i = skipSpace(w.b, w.i+1)
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
		return true
	}
	for {
		if w.i >= len(w.b) {
			return false
		}
		switch w.b[w.i] {
		case '{':
			if !w.nested(depth, func() bool { return w.object(depth+1, false, false) }) {
				return false
			}
		case '[':
			if !w.nested(depth, func() bool { return w.array(depth + 1) }) {
				return false
			}
		case '"':
			end := stringEnd(w.b, w.i)
			if end < 0 {
				return false
			}
			w.i = end + 1
		default:
			if !w.literal() {
				return false
			}
		}
		if !w.next(']') {
			return false
		}
		if w.b[w.i-1] == ']' {
			return true
		}
	}
}

// nested walks the object or array at w.i by walk, or steps over it when
// depth values are open already.
func (w *argWalk) nested(depth int, walk func() bool) bool {
	if depth < maxOpen {
		return walk()
	}
	end := skipNested(w.b, w.i)
	if end < 0 {
		return false
	}
	w.i = end
	return true
}

// next steps over the ',' or closer after a value, and the space around.
func (w *argWalk) next(closer byte) bool {
	w.i = skipSpace(w.b, w.i)
	if w.i >= len(w.b) || (w.b[w.i] != ',' && w.b[w.i] != closer) {
		return false
	}
	w.i++
	if w.b[w.i-1] == ',' {
		w.i = skipSpace(w.b, w.i)
	}
	return true
}

// literal steps over a number, true, false or null.
func (w *argWalk) literal() bool {
	start := w.i
	for w.i < len(w.b) && literalByte[w.b[w.i]] {
		w.i++
	}
	return w.i > start
}

// literalByte marks the bytes a number or literal is written with.
var literalByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eEtruefalsn") {
		t[c] = true
	}
	return t
}()

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the string opened
// at b[start], or -1 when it is not closed: the first quote after start
// that follows an even number of backslashes.
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i
		for k > start+1 && b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i
		}
	}
	return -1
}

// skipNested returns the index just past the object or array at b[i],
// or -1 when it is not closed: strings are stepped over, brackets
// counted (not matched: the walk only needs where the value ends).
func skipNested(b []byte, i int) int {
	open := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return -1
			}
			i = end
		case '{', '[':
			open++
		case '}', ']':
			open--
			if open == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// appendUnquoted appends the JSON string raw (quotes included),
// unescaped, with invalid UTF-8 as U+FFFD.
func appendUnquoted(dst, raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return append(dst, raw[1:len(raw)-1]...)
	}
	dst, _ = jsontext.AppendUnquote(dst, raw)
	return dst
}

// memberOf reads a member's name, quoted as in JSON.
func memberOf(raw []byte) member {
	name := raw
	if bytes.IndexByte(raw, '\\') >= 0 {
		name, _ = jsontext.AppendUnquote(nil, raw)
	} else if len(raw) >= 2 {
		name = raw[1 : len(raw)-1]
	}
	switch string(name) {
	case "properties":
		return propertiesMember
	case "description":
		return descriptionMember
	}
	return otherMember
}

// isStopWord reports whether w (lower case) is one of the common English
// words left out of the index: the Snowball project's English stop list.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "am", "an",
		"and", "any", "are", "as", "at", "be", "because", "been", "before",
		"being", "below", "between", "both", "but", "by", "can", "did", "do",
		"does", "doing", "don", "down", "during", "each", "few", "for", "from",
		"further", "had", "has", "have", "having", "he", "her", "here", "hers",
		"herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
		"it", "its", "itself", "just", "me", "more", "most", "my", "myself",
		"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
		"other", "our", "ours", "ourselves", "out", "over", "own", "s", "same",
		"she", "should", "so", "some", "such", "t", "than", "that", "the", "their",
		"theirs", "them", "themselves", "then", "there", "these", "they",
		"this", "those", "through", "to", "too", "under", "until", "up",
		"very", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "whom", "why", "will", "with", "you", "your", "yours", "yourself",
		"yourselves":
		return true
	}
	return false
}
