package toolsearch

import (
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Forget empties the vocabulary kept for the next index, as in a
// program's first index.
func Forget() { vocabCache.take() }

// Arguments is the text a tool's input schema adds to the index.
var Arguments = arguments

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
