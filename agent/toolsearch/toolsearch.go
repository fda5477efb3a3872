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
	"encoding/json"
	"hash/maphash"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

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
	docs := v.weighAll(tools)
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
	words  wordTable        // a word as written, and in lower case → its place in wordTerm, -1 when left out
	nWords int              // keys in words
	terms  []string         // per term: its stem
	stemID map[string]int32 // a stem → its term
	docs   map[uint64]*doc  // by docKey

	// wordTerm is the term of each word in lower case that is not left
	// out (several words may share a stem, and so a term); a word met in
	// this build has one only once stemmed (learnStems), -1 until then.
	wordTerm []int32

	// what weighAll reuses from one tool to the next
	tf      []float64    // per word, then per term: its weight in the tool being weighed
	ordered []int32      // the words, then terms, the tool being weighed has, in order met
	byWord  []termWeight // the words of the tools weighed, tool after tool
	scratch []byte       // what eachArgument reuses
	fresh   []string     // the words in lower case met for the first time, not yet sent to be stemmed
	arena   []byte       // where those are kept: bytes only appended, never changed
	stems   chan<- []string
	stemmed <-chan []string
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
	v := &vocab{
		seed:     maphash.MakeSeed(),
		stemID:   make(map[string]int32, wordsHint/2),
		docs:     map[uint64]*doc{},
		wordTerm: make([]int32, 0, wordsHint/2),
		tf:       make([]float64, 0, wordsHint/2),
	}
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

// weighAll gives what each of tools weighs: what v knows, or weighed
// now. The words met for the first time are stemmed on a goroutine of
// their own while the tools are split, when there is more than one
// processor; the tools weighed now are weighed first by their words,
// then by those words' terms, once stemmed.
func (v *vocab) weighAll(tools []mcp.Tool) []*doc {
	docs := make([]*doc, len(tools))
	var weighed []int     // the tools weighed now
	var keys []uint64     // their keys
	var lengths []float64 // their lengths
	var ends []int        // where their words end in v.words
	for i := range tools {
		key := docKey(v.seed, &tools[i])
		if d, ok := v.docs[key]; ok {
			docs[i] = d
			continue
		}
		weighed = append(weighed, i)
		keys = append(keys, key)
	}
	if len(weighed) == 0 {
		return docs
	}
	v.byWord = slices.Grow(v.byWord[:0], wordsPerTool*len(weighed))
	for _, i := range weighed {
		lengths = append(lengths, v.weighWords(&tools[i]))
		ends = append(ends, len(v.byWord))
	}
	v.learnStems()
	// Turn each tool's words into terms in place, packed to the left,
	// then give all the docs of this build one array of each.
	from, packed := 0, 0
	for j, end := range ends {
		n := v.byTerm(v.byWord[from:end])
		copy(v.byWord[packed:], v.byWord[from:from+n])
		from, packed, ends[j] = end, packed+n, packed+n
	}
	terms := slices.Clone(v.byWord[:packed])
	made := make([]doc, len(weighed))
	start := 0
	for j, end := range ends {
		d := &made[j]
		d.terms, d.length = terms[start:end:end], lengths[j]
		start = end
		v.docs[keys[j]] = d
		docs[weighed[j]] = d
	}
	return docs
}

// wordsPerTool is how many different words a tool is expected to have
// (the 634 fixture tools have 63 on average).
const wordsPerTool = 64

// stemBatch is how many new words go to be stemmed at once.
const stemBatch = 256

// weighWords splits and weighs the fields of t, adds its words and their
// weights to v.byWord (to be turned into terms by byTerm), and gives its
// length.
func (v *vocab) weighWords(t *mcp.Tool) (length float64) {
	add := func(text string, w float64) {
		if len(text) > maxTextBytes {
			text = text[:maxTextBytes]
		}
		eachWord(text, func(word string) {
			at := v.word(word)
			if at < 0 {
				return
			}
			if v.tf[at] == 0 {
				v.ordered = append(v.ordered, at)
			}
			v.tf[at] += w
			length += w
		})
	}
	add(t.Name, weightName)
	add(t.Title, weightTitle)
	if t.Annotations != nil {
		add(t.Annotations.Title, weightTitle)
	}
	add(t.Description, weightDescription)
	var took [2]int // bytes of argument names and of descriptions, as in arguments's text
	eachArgument(t.InputSchema, &v.scratch, func(text string, desc bool) {
		used, w := &took[0], weightArgName
		if desc {
			used, w = &took[1], weightArgDesc
		}
		if *used >= maxTextBytes {
			return
		}
		add(text[:min(len(text), maxTextBytes-*used)], w)
		*used += len(text) + 1
	})
	v.byWord = v.take(v.byWord)
	return length
}

// take appends what v.tf and v.ordered hold as weights to into, and
// empties them.
func (v *vocab) take(into []termWeight) []termWeight {
	for _, at := range v.ordered {
		into = append(into, termWeight{at, float32(v.tf[at])})
		v.tf[at] = 0
	}
	v.ordered = v.ordered[:0]
	return into
}

// byTerm turns the words of a tool into their terms, in place (words of
// one stem add up), and gives how many there are.
func (v *vocab) byTerm(words []termWeight) int {
	for _, tw := range words {
		term := v.wordTerm[tw.term]
		if v.tf[term] == 0 {
			v.ordered = append(v.ordered, term)
		}
		v.tf[term] += float64(tw.tf)
	}
	return len(v.take(words[:0]))
}

// word is the place in wordTerm of word, as written (-1 for a word left
// out): a word met for the first time is looked up in lower case, and a
// lower-case word met for the first time is given a place, and sent to be
// stemmed.
func (v *vocab) word(word string) int32 {
	h := v.words.hash(word)
	if at, ok := v.words.get(h); ok {
		return at
	}
	lw := strings.ToLower(word) // word itself when it has no capitals
	lh := h
	if lw != word {
		lh = v.words.hash(lw)
	}
	at, ok := v.words.get(lh)
	if !ok {
		at = -1
		if !leftOut(lw) {
			at = int32(len(v.wordTerm))
			v.wordTerm = append(v.wordTerm, -1)
			v.tf = append(v.tf, 0)
			v.fresh = append(v.fresh, v.keep(lw)) // lw may be the tools' memory, or scratch
			if len(v.fresh) == stemBatch {
				v.sendFresh()
			}
		}
		v.words.put(lh, at)
		v.nWords++
	}
	if lh != h {
		v.words.put(h, at)
		v.nWords++
	}
	return at
}

// keep gives a copy of word in v.arena.
func (v *vocab) keep(word string) string {
	if cap(v.arena)-len(v.arena) < len(word) {
		v.arena = make([]byte, 0, max(4<<10, len(word))) // the strings of the last stay where they are
	}
	at := len(v.arena)
	v.arena = append(v.arena, word...)
	return unsafe.String(&v.arena[at], len(word))
}

// sendFresh sends the fresh words to be stemmed, on a goroutine that
// starts with the first batch (when there is more than one processor)
// and ends when learnStems has all it stemmed.
func (v *vocab) sendFresh() {
	if v.stems == nil && runtime.GOMAXPROCS(0) > 1 {
		in, out := make(chan []string, 64), make(chan []string, 1)
		v.stems, v.stemmed = in, out
		go func() {
			var st stemmer
			all := make([]string, 0, wordsHint/2)
			for batch := range in {
				for _, lw := range batch {
					all = append(all, st.stem(lw))
				}
			}
			out <- all
		}()
	}
	if v.stems != nil {
		v.stems <- v.fresh
		v.fresh = nil
		return
	}
}

// learnStems gives the words met in this build their terms, in the order
// met.
func (v *vocab) learnStems() {
	var stems []string
	if v.stems != nil {
		if len(v.fresh) > 0 {
			v.sendFresh()
		}
		close(v.stems)
		stems = <-v.stemmed
		v.stems, v.stemmed = nil, nil
	}
	var st stemmer
	for _, lw := range v.fresh { // those not sent
		stems = append(stems, st.stem(lw))
	}
	v.fresh = v.fresh[:0]
	first := len(v.wordTerm) - len(stems)
	for i, stem := range stems {
		term, ok := v.stemID[stem]
		if !ok {
			term = int32(len(v.terms))
			v.stemID[stem] = term
			v.terms = append(v.terms, stem)
			if len(v.tf) < len(v.terms) {
				v.tf = append(v.tf, 0)
			}
		}
		v.wordTerm[first+i] = term
	}
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
// left out.
func (st *stemmer) stem(lw string) string {
	stem := ""
	switch {
	case leftOut(lw):
	case len(lw) == 2 || byteClass[lw[0]] == digit:
		stem = lw // what Snowball English leaves as it is: two letters, or digits
	default:
		if st.env == nil {
			st.env = snowballstem.NewEnv(lw)
		} else {
			st.env.SetCurrent(lw)
		}
		english.Stem(st.env)
		if stem = st.env.Current(); stem == "" {
			stem = lw // Snowball leaves a word of three letters or more at least a letter; should it not, the word stands for itself
		}
	}
	return stem
}

// leftOut reports whether the lower-case word lw is left out of the
// index: shorter than two letters, or common.
func leftOut(lw string) bool { return len(lw) < 2 || isStopWord(lw) }

// eachWord calls fn with the words of s, substrings of it: s is split at
// non-letters and non-digits, and within a run of letters at a change
// from lower to upper case ("pullRequest", and "HTTPServer" as HTTP,
// Server) and between letters and digits. ASCII is read a byte at a time
// through a table, a run of one class at once where that changes
// nothing; other runes are classed by package unicode.
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

// eachArgument calls found with each argument name and description of
// schema (desc tells which), as arguments finds them, in order met: text
// is unescaped, and only valid during the call (it is schema's memory, or
// scratch's).
func eachArgument(schema json.RawMessage, scratch *[]byte, found func(text string, desc bool)) {
	w := argWalk{s: unsafe.String(unsafe.SliceData(schema), len(schema)), scratch: *scratch}
	w.i = skipSpace(w.s, 0)
	if w.i < len(w.s) {
		switch w.s[w.i] {
		case '{':
			w.object(found, 1, false, false)
		case '[':
			w.array(found, 1)
		}
	}
	*scratch = w.scratch
}

// member is what a member's name says about its value, to arguments.
type member uint8

const (
	otherMember member = iota
	propertiesMember
	descriptionMember
)

// argWalk reads a schema for arguments: a walk down its objects and
// arrays that steps over everything else, a byte at a time only where
// the structure is (a string is skipped to its closing quote at once).
// Each method reports false at a syntax error, where the walk ends.
type argWalk struct {
	s       string // the schema
	i       int    // the next byte to read
	count   int    // names found
	scratch []byte // where escaped text is unquoted
}

// maxOpen is how many objects and arrays the walk is in at most: a
// deeper value is stepped over whole.
const maxOpen = 2*maxDepth + 2

// object walks the object at w.i, depth deep (counting itself), and
// calls found as eachArgument does: its member names are arguments when
// props, and its "description" describes one when arg.
func (w *argWalk) object(found func(text string, desc bool), depth int, props, arg bool) bool {
	w.i = skipSpace(w.s, w.i+1)
	if w.i < len(w.s) && w.s[w.i] == '}' {
		w.i++
		return true
	}
	for {
		if w.i >= len(w.s) || w.s[w.i] != '"' {
			return false
		}
		end := stringEnd(w.s, w.i)
		if end < 0 {
			return false
		}
		raw := w.s[w.i : end+1]
		name := memberOf(raw)
		if props && w.count < maxArgs {
			w.count++
			found(w.unquote(raw), false)
		}
		w.i = skipSpace(w.s, end+1)
		if w.i >= len(w.s) || w.s[w.i] != ':' {
			return false
		}
		w.i = skipSpace(w.s, w.i+1)
		if w.i >= len(w.s) || !w.value(found, depth, name == propertiesMember && !props, props, arg && name == descriptionMember) {
			return false
		}
		if !w.next('}') {
			return false
		}
		if w.s[w.i-1] == '}' {
			return true
		}
	}
}

// array walks the array at w.i, depth deep: what is in it is neither an
// argument nor a description.
func (w *argWalk) array(found func(text string, desc bool), depth int) bool {
	w.i = skipSpace(w.s, w.i+1)
	if w.i < len(w.s) && w.s[w.i] == ']' {
		w.i++
		return true
	}
	for {
		if w.i >= len(w.s) || !w.value(found, depth, false, false, false) {
			return false
		}
		if !w.next(']') {
			return false
		}
		if w.s[w.i-1] == ']' {
			return true
		}
	}
}

// value walks the value at w.i, inside depth values: an object there
// holds arguments when props, or is an argument's schema when arg; a
// string is an argument's description when desc. An object or array
// deeper than the walk goes is stepped over.
func (w *argWalk) value(found func(text string, desc bool), depth int, props, arg, desc bool) bool {
	switch w.s[w.i] {
	case '{', '[':
		switch {
		case depth >= maxOpen:
			return w.skip()
		case w.s[w.i] == '{':
			return w.object(found, depth+1, props, arg)
		}
		return w.array(found, depth+1)
	case '"':
		end := stringEnd(w.s, w.i)
		if end < 0 {
			return false
		}
		if desc {
			found(w.unquote(w.s[w.i:end+1]), true)
		}
		w.i = end + 1
		return true
	}
	return w.literal()
}

// skip steps over the object or array at w.i.
func (w *argWalk) skip() bool {
	end := skipNested(w.s, w.i)
	if end < 0 {
		return false
	}
	w.i = end
	return true
}

// next steps over the ',' or closer after a value, and the space around.
func (w *argWalk) next(closer byte) bool {
	w.i = skipSpace(w.s, w.i)
	if w.i >= len(w.s) || (w.s[w.i] != ',' && w.s[w.i] != closer) {
		return false
	}
	w.i++
	if w.s[w.i-1] == ',' {
		w.i = skipSpace(w.s, w.i)
	}
	return true
}

// literal steps over a number, true, false or null.
func (w *argWalk) literal() bool {
	start := w.i
	for w.i < len(w.s) && literalByte[w.s[w.i]] {
		w.i++
	}
	return w.i > start
}

// unquote is the JSON string raw (quotes included) unescaped, with invalid
// UTF-8 as U+FFFD: raw's memory when it has neither, else the scratch's,
// valid until the next call.
func (w *argWalk) unquote(raw string) string {
	if strings.IndexByte(raw, '\\') < 0 && utf8.ValidString(raw) {
		return raw[1 : len(raw)-1]
	}
	w.scratch, _ = jsontext.AppendUnquote(w.scratch[:0], raw)
	return unsafe.String(unsafe.SliceData(w.scratch), len(w.scratch))
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
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the string opened
// at s[start], or -1 when it is not closed: the first quote after start
// that follows an even number of backslashes.
func stringEnd(s string, start int) int {
	for i := start + 1; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		k := i
		for k > start+1 && s[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i
		}
	}
	return -1
}

// skipNested returns the index just past the object or array at s[i],
// or -1 when it is not closed: strings are stepped over, brackets
// counted (not matched: the walk only needs where the value ends).
func skipNested(s string, i int) int {
	open := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			end := stringEnd(s, i)
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

// memberOf reads a member's name, quoted as in JSON.
func memberOf(raw string) member {
	name := raw
	if strings.IndexByte(raw, '\\') >= 0 {
		b, _ := jsontext.AppendUnquote(nil, raw)
		name = string(b)
	} else if len(raw) >= 2 {
		name = raw[1 : len(raw)-1]
	}
	switch name {
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
