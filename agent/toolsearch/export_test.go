package toolsearch

import (
	"encoding/json"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Forget empties the vocabulary kept for the next index, as in a
// program's first index.
func Forget() { vocabCache.take() }

// Arguments is the text a tool's input schema adds to the index.
var Arguments = arguments

// arguments returns the argument names and descriptions of an input
// schema, as text: the member names of every "properties" object of the
// schema (nested ones too, within maxDepth) and the "description" of each
// such argument, at most maxArgs, each followed by a space. It reads the
// schema once, without decoding it into values; it stops at a syntax
// error.
func arguments(schema json.RawMessage) (names, descs string) {
	var nb, db []byte
	var scratch []byte
	eachArgument(schema, &scratch, func(text string, desc bool) {
		if desc {
			db = append(append(db, text...), ' ')
		} else {
			nb = append(append(nb, text...), ' ')
		}
	})
	return string(nb), string(db)
}

// Stem is the index's stem of a lower-case word, and SnowballStem what
// Snowball English alone makes of it.
func Stem(lw string) string {
	var st stemmer
	return st.stem(lw)
}

func SnowballStem(lw string) string {
	env := snowballstem.NewEnv(lw)
	english.Stem(env)
	return env.Current()
}

// EachWord is the splitter of the index.
var EachWord = eachWord
