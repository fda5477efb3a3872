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
	"runtime"
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
	idx := &Index{tools: tools, byName: make(map[string]int, len(tools)), termIDs: make(map[string]int32, wordsHint), length: make([]float64, len(tools))}
	stems := stemCache.take() // words repeat across tools and lists: stem each once
	defer stemCache.give(stems)
	table := docCache.take()
	defer docCache.give(table)
	docs, seed := table.m, table.seed
	keys := make([]uint64, len(tools))
	var missing []int // tools not weighed before
	for i := range tools {
		keys[i] = docKey(seed, &tools[i])
		if _, ok := docs[keys[i]]; !ok {
			missing = append(missing, i)
		}
	}
	for i, d := range weighAll(tools, missing, stems) {
		docs[keys[missing[i]]] = d
	}
	// Count each term's tools first, so that all postings share one array.
	var df []int32
	ids := make([][]int32, len(tools)) // per tool: the ids of its terms
	all := 0
	for i := range tools {
		d := docs[keys[i]]
		ids[i] = make([]int32, len(d.terms))
		for j, tw := range d.terms {
			id, ok := idx.termIDs[tw.term]
			if !ok {
				id = int32(len(df))
				idx.termIDs[tw.term] = id
				df = append(df, 0)
			}
			df[id]++
			ids[i][j] = id
		}
		all += len(d.terms)
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
		d := docs[keys[i]]
		for j, tw := range d.terms {
			id := ids[i][j]
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

// weighAll weighs the tools of which, on as many goroutines as there are
// processors for a list long enough to be worth it, each a run of tools
// of its own (tools of one server share their words, and a word met by
// two goroutines at once is stemmed twice); stems is shared by all.
func weighAll(tools []mcp.Tool, which []int, stems map[string]string) []doc {
	out := make([]doc, len(which))
	shared := &sharedStems{m: stems}
	workers := min(runtime.GOMAXPROCS(0), len(which)/128)
	if workers <= 1 {
		sc := tfScratch{stems: shared}
		for i, w := range which {
			out[i] = sc.weigh(&tools[w])
		}
		return out
	}
	var wg sync.WaitGroup
	for k := range workers {
		from, to := k*len(which)/workers, (k+1)*len(which)/workers
		wg.Go(func() {
			sc := tfScratch{stems: shared}
			for i := from; i < to; i++ {
				out[i] = sc.weigh(&tools[which[i]])
			}
		})
	}
	wg.Wait()
	return out
}

// sharedStems is a cache of stems by lower-case word that the goroutines
// of a build share.
type sharedStems struct {
	mu sync.Mutex
	m  map[string]string
}

// stem is the stem of the lower-case word lw, from the cache or by st
// (outside the lock, so that goroutines stem at once).
func (c *sharedStems) stem(lw string, st *stemmer) string {
	c.mu.Lock()
	stem, ok := c.m[lw]
	c.mu.Unlock()
	if ok {
		return stem
	}
	stem = st.stem(lw)
	c.mu.Lock()
	c.m[strings.Clone(lw)] = stem // lw may be part of a tool's text, which the cache must not keep
	c.mu.Unlock()
	return stem
}

// doc is what a tool weighs in the index: its terms with their weighted
// frequencies, and its weighted length.
type doc struct {
	terms  []termWeight
	length float64
}

type termWeight struct {
	term string
	tf   float32
}

// tfScratch is the memory weigh reuses from one tool to the next.
type tfScratch struct {
	words   wordTable // a word as written → its place in terms (-1 when left out), in this build
	terms   []string  // the stems met in this build
	tf      []float64 // per place in terms: its weight in the tool being weighed
	ordered []int32   // the places in terms the tool being weighed has, in order met
	stems   *sharedStems
	places  map[string]int32 // a stem → its place in terms
	stemmer stemmer

	// what arguments reuses
	dec          *jsontext.Decoder
	reader       bytes.Reader
	names, descs []byte
	stack        []frame
}

// weigh splits and weighs the fields of t.
func (sc *tfScratch) weigh(t *mcp.Tool) doc {
	if sc.places == nil {
		sc.words.init(wordsHint)
		sc.places = make(map[string]int32, wordsHint)
	}
	var d doc
	add := func(text string, w float64) {
		if len(text) > maxTextBytes {
			text = text[:maxTextBytes]
		}
		eachWord(text, func(word string) {
			h := sc.words.hash(word)
			at, ok := sc.words.get(h)
			if !ok {
				at = sc.learn(word)
				sc.words.put(h, at)
			}
			if at < 0 {
				return
			}
			if sc.tf[at] == 0 {
				sc.ordered = append(sc.ordered, at)
			}
			sc.tf[at] += w
			d.length += w
		})
	}
	add(t.Name, weightName)
	add(t.Title, weightTitle)
	if t.Annotations != nil {
		add(t.Annotations.Title, weightTitle)
	}
	add(t.Description, weightDescription)
	names, descs := sc.arguments(t.InputSchema)
	add(names, weightArgName)
	add(descs, weightArgDesc)
	d.terms = make([]termWeight, len(sc.ordered))
	for i, at := range sc.ordered {
		d.terms[i] = termWeight{sc.terms[at], float32(sc.tf[at])}
		sc.tf[at] = 0
	}
	sc.ordered = sc.ordered[:0]
	return d
}

// learn finds the stem of a word met for the first time in this build and
// gives its place in sc.terms (-1 for a word left out).
func (sc *tfScratch) learn(word string) int32 {
	stem := sc.stems.stem(strings.ToLower(word), &sc.stemmer) // ToLower gives word itself when it has no capitals
	at := int32(-1)
	if stem != "" {
		var ok bool
		if at, ok = sc.places[stem]; !ok {
			at = int32(len(sc.terms))
			sc.places[stem] = at
			sc.terms = append(sc.terms, stem)
			sc.tf = append(sc.tf, 0)
		}
	}
	return at
}

// wordTable maps words to places by a 64-bit hash of the word with a
// seed of its own: two words are taken for one only if their hashes
// collide, which for the few thousand words of a build is as likely as
// 1 in 10^12, and a server cannot aim for it without knowing the seed
// (docKey makes the same bet). It is an open-addressed table: cheaper
// than a map of strings for the tens of thousands of words a build
// looks up.
type wordTable struct {
	seed  maphash.Seed
	slots []wordSlot // a power of two long, at most half full
	n     int
}

type wordSlot struct {
	h  uint64 // 0 for an empty slot
	at int32
}

func (t *wordTable) init(n int) {
	t.seed = maphash.MakeSeed()
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
			return t.slots[i].at, true
		case 0:
			return 0, false
		}
	}
}

// put adds the key h, not in t.
func (t *wordTable) put(h uint64, at int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]wordSlot, 2*len(old))
		for _, s := range old {
			if s.h != 0 {
				t.place(s)
			}
		}
	}
	t.place(wordSlot{h, at})
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

// docCache keeps what the tools of the last index weighed, for the next
// (a list changes a little at a time, and each server's list is asked for
// again after every change), up to maxDocs tools.
var docCache docs

const maxDocs = 1 << 13

type docs struct {
	mu sync.Mutex
	t  *docTable
}

// docTable is what tools weighed, by docKey with seed.
type docTable struct {
	m    map[uint64]doc
	seed maphash.Seed
}

// take gives the cache to one New at a time (another gets a table of its
// own meanwhile).
func (c *docs) take() *docTable {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = nil
	if t == nil || len(t.m) > maxDocs {
		t = &docTable{m: map[uint64]doc{}, seed: maphash.MakeSeed()}
	}
	return t
}

func (c *docs) give(t *docTable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t == nil || len(t.m) > len(c.t.m) {
		c.t = t
	}
}

// stemCache keeps the stems of the words indexed, for the next index
// (a tool list changes a little at a time), up to maxStems words.
var stemCache stems

const maxStems = 1 << 16

// wordsHint is how many different words a build is expected to meet: the
// maps that hold them start that large (634 tools of 47 servers have
// 4,577).
const wordsHint = 1 << 12

type stems struct {
	mu sync.Mutex
	m  map[string]string
}

// take gives the cache to one New at a time (another gets a map of its
// own meanwhile).
func (c *stems) take() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.m
	c.m = nil
	if m == nil || len(m) > maxStems {
		m = make(map[string]string, wordsHint)
	}
	return m
}

func (c *stems) give(m map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(m) > len(c.m) {
		c.m = m
	}
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
	case len(lw) == 2 || asciiClass[lw[0]&0x7f] == digit:
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
		c, size := asciiClass[s[i]&0x7f], 1
		if s[i] >= utf8.RuneSelf {
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
)

// asciiClass is the class of each ASCII byte.
var asciiClass = func() (t [128]uint8) {
	for c := range t {
		t[c] = classOf(rune(c))
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
	var sc tfScratch
	return sc.arguments(schema)
}

// member is what a member's name says about its value, to arguments.
type member uint8

const (
	otherMember member = iota
	propertiesMember
	descriptionMember
)

// arguments is the package's arguments, with the decoder and the buffers
// of sc reused.
func (sc *tfScratch) arguments(schema json.RawMessage) (names, descs string) {
	if len(schema) == 0 {
		return "", ""
	}
	sc.reader.Reset(schema)
	if sc.dec == nil {
		sc.dec = jsontext.NewDecoder(&sc.reader, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	} else {
		sc.dec.Reset(&sc.reader, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	}
	dec := sc.dec
	nb, db := sc.names[:0], sc.descs[:0]
	count := 0
	stack := sc.stack[:0]
walk:
	for {
		kind := dec.PeekKind()
		if kind == 0 {
			break // the end, or a syntax error
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expectName && kind == '"' {
			raw, err := dec.ReadValue()
			if err != nil {
				break walk
			}
			top.name, top.expectName = memberOf(raw), false
			if top.props && count < maxArgs {
				count++
				nb, _ = jsontext.AppendUnquote(nb, raw)
				nb = append(nb, ' ')
			}
			continue
		}
		switch kind {
		case '{', '[':
			if len(stack) >= 2*maxDepth+2 {
				if dec.SkipValue() != nil { // past the depth taken: the value is skipped whole
					break walk
				}
				if top != nil && top.obj {
					top.expectName = true
				}
				continue
			}
			if _, err := dec.ReadToken(); err != nil {
				break walk
			}
			f := frame{obj: kind == '{', expectName: kind == '{'}
			if top != nil && top.obj {
				f.props = top.name == propertiesMember && !top.props
				f.arg = top.props
			}
			stack = append(stack, f)
		case '}', ']':
			if _, err := dec.ReadToken(); err != nil {
				break walk
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].expectName = true
			}
		default:
			raw, err := dec.ReadValue()
			if err != nil {
				break walk
			}
			if top != nil && top.obj {
				if top.arg && top.name == descriptionMember && kind == '"' {
					db, _ = jsontext.AppendUnquote(db, raw)
					db = append(db, ' ')
				}
				top.expectName = true
			}
		}
		if len(stack) == 0 {
			break walk
		}
	}
	sc.names, sc.descs, sc.stack = nb, db, stack[:0]
	return string(nb), string(db)
}

// frame is an object or array arguments is in.
type frame struct {
	obj        bool   // an object, not an array
	props      bool   // a "properties" object: its member names are arguments
	arg        bool   // an argument's schema: its "description" describes it
	name       member // the member being read
	expectName bool
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
