package toolsearch

// Forget empties the caches of stems and of what tools weighed, as in a
// program's first index.
func Forget() {
	stemCache.take()
	docCache.take()
}

// Arguments is the text a tool's input schema adds to the index.
var Arguments = arguments
