package paging

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// walk collects what All yields and what it warned of.
func walk(fetch func(string) ([]int, string, error), max int) (items []int, warned []string, err error) {
	for item, e := range All(fetch, func(msg string, _ ...any) { warned = append(warned, msg) }) {
		if e != nil {
			return items, warned, e
		}
		items = append(items, item)
		if len(items) == max {
			break
		}
	}
	return items, warned, nil
}

func TestAllWalksEveryPageAndStopsWhereItMust(t *testing.T) {
	pages := map[string]struct {
		items []int
		next  string
	}{"": {[]int{1, 2}, "p2"}, "p2": {[]int{3}, "p3"}, "p3": {nil, ""}}
	fetch := func(cursor string) ([]int, string, error) { return pages[cursor].items, pages[cursor].next, nil }
	items, warned, err := walk(fetch, 0)
	assert.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, items)
	assert.Empty(t, warned)

	loop := func(cursor string) ([]int, string, error) { return []int{len(cursor)}, "again", nil }
	items, warned, _ = walk(loop, 0)
	assert.Equal(t, []int{0, 5}, items, "the first repeat of a cursor ends the walk")
	assert.Equal(t, []string{"mcp: server repeated a cursor; stopped paging"}, warned)

	fetched := 0
	endless := func(cursor string) ([]int, string, error) {
		fetched++
		return nil, strconv.Itoa(fetched), nil
	}
	_, warned, _ = walk(endless, 0)
	assert.Equal(t, MaxPages, fetched)
	assert.Equal(t, []string{"mcp: stopped paging after too many pages"}, warned)

	boom := errors.New("boom")
	failing := func(cursor string) ([]int, string, error) {
		if cursor == "" {
			return []int{1}, "p2", nil
		}
		return nil, "", boom
	}
	items, _, err = walk(failing, 0)
	assert.Equal(t, []int{1}, items)
	assert.ErrorIs(t, err, boom, "an error comes last")

	counted := 0
	for range All(func(string) ([]int, string, error) {
		counted++
		return []int{1, 2, 3}, "more" + strconv.Itoa(counted), nil
	}, func(string, ...any) {}) {
		break
	}
	assert.Equal(t, 1, counted, "a consumer that stops stops the fetching")
}
