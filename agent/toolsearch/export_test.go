package toolsearch

// ForgetStems empties the cache of stems, as in a program's first index.
func ForgetStems() { stemCache.take() }
