// Package listcache keeps a complete list a server gave (tools, say)
// while it is known to be current: until a change is announced, or for
// the time the server said it stays fresh.
package listcache

import (
	"slices"
	"sync"
	"time"
)

// Cache is the last complete list, kept while it is known to be current.
// Its zero value is empty and ready.
type Cache[T any] struct {
	mu      sync.Mutex
	list    []T
	valid   bool
	gen     uint64
	expires time.Time // zero: until invalidated
}

// Get returns a copy of the list and whether it is current.
func (c *Cache[T]) Get() ([]T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.valid && !c.expires.IsZero() && !time.Now().Before(c.expires) {
		c.list, c.valid = nil, false
	}
	return slices.Clone(c.list), c.valid
}

// SetFor is Set with a freshness of ttl.
func (c *Cache[T]) SetFor(list []T, gen uint64, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.list, c.valid, c.expires = slices.Clone(list), true, time.Now().Add(ttl)
	}
}

// Generation is what a listing starts from: Set keeps its outcome only
// if no change was announced meanwhile.
func (c *Cache[T]) Generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Set stores the list made at generation gen, unless a change was
// announced since, until the next change.
func (c *Cache[T]) Set(list []T, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.list, c.valid, c.expires = slices.Clone(list), true, time.Time{}
	}
}

// Invalidate drops the list: a change was announced.
func (c *Cache[T]) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.list, c.valid = nil, false
}
