package listcache

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAListIsKeptWhileItIsCurrent(t *testing.T) {
	var c Cache[string]
	_, ok := c.Get()
	assert.False(t, ok, "empty at first")

	gen := c.Generation()
	c.Set([]string{"a", "b"}, gen)
	got, ok := c.Get()
	assert.True(t, ok)
	assert.Equal(t, []string{"a", "b"}, got)
	got[0] = "changed by the caller"
	got, _ = c.Get()
	assert.Equal(t, "a", got[0], "each Get is a copy")

	c.Invalidate()
	_, ok = c.Get()
	assert.False(t, ok, "a change was announced")

	gen = c.Generation()
	c.Invalidate() // a change announced while the listing ran
	c.Set([]string{"stale"}, gen)
	_, ok = c.Get()
	assert.False(t, ok, "a listing that began before a change is not kept")
}

func TestAListWithATTLExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c Cache[int]
		c.SetFor([]int{1}, c.Generation(), time.Second)
		_, ok := c.Get()
		assert.True(t, ok)
		time.Sleep(999 * time.Millisecond)
		_, ok = c.Get()
		assert.True(t, ok, "fresh for its ttl")
		time.Sleep(time.Millisecond)
		_, ok = c.Get()
		assert.False(t, ok, "stale once the ttl is over")
	})
}
