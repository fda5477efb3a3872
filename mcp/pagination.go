package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"iter"
	"time"
)

// maxPages bounds how many pages a list method fetches.
const maxPages = 10000

// listParams are the parameters of a list method: the cursor of the page
// to fetch ("" for the first). Nil means the first page.
type listParams struct {
	Cursor string          `json:"cursor,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// page is one page of a list method's result; key names its items.
type page[T any] struct {
	Items      []T
	NextCursor string
	CacheHints
}

// CacheHints are the caching hints of a result (2026-07-28: list results,
// resources/read, server/discover). TTLMs is how long, in milliseconds, the
// result may be taken as fresh (nil when the server gave none, which means
// stale at once); CacheScope is "public" or "private" (who may cache it).
type CacheHints struct {
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// ttl is how long the result may be taken as fresh: zero when no positive
// ttlMs was given.
func (h CacheHints) ttl() time.Duration {
	if h.TTLMs == nil || *h.TTLMs <= 0 {
		return 0
	}
	return time.Duration(*h.TTLMs) * time.Millisecond
}

// listPage fetches one page of method, whose items are under key.
func listPage[T any](ctx context.Context, c *Connection, method, key string, params *listParams) (*page[T], error) {
	var p any
	if params != nil && (params.Cursor != "" || params.Meta != nil) {
		p = params
	}
	var raw map[string]json.RawMessage
	if err := c.call(ctx, method, p, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, wrap(method, ErrBadResult)
	}
	out := &page[T]{}
	if items, ok := raw[key]; ok {
		if err := json.Unmarshal(items, &out.Items); err != nil {
			return nil, wrap(method, &badResult{err})
		}
	}
	if next, ok := raw["nextCursor"]; ok {
		json.Unmarshal(next, &out.NextCursor)
	}
	if ttl, ok := raw["ttlMs"]; ok {
		var n int64
		if json.Unmarshal(ttl, &n) == nil {
			out.TTLMs = &n
		}
	}
	if scope, ok := raw["cacheScope"]; ok {
		json.Unmarshal(scope, &out.CacheScope)
	}
	return out, nil
}

// seq yields every item of every page of method, in order. A cursor the
// server repeats ends the sequence (logged) rather than looping; an error
// is yielded once, last. Cursors are remembered by their SHA-256 digest, so
// the memory a cycle check keeps is 32 bytes a page, however long the
// server's cursors are.
func seq[T any](ctx context.Context, c *Connection, method, key string) iter.Seq2[T, error] {
	return seqHints[T](ctx, c, method, key, nil)
}

// seqHints is seq that also hands each page's cache hints to hints (when
// not nil).
func seqHints[T any](ctx context.Context, c *Connection, method, key string, hints func(CacheHints)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		seen := map[[sha256.Size]byte]bool{}
		params := &listParams{}
		for range maxPages {
			p, err := listPage[T](ctx, c, method, key, params)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if hints != nil {
				hints(p.CacheHints)
			}
			for _, item := range p.Items {
				if !yield(item, nil) {
					return
				}
			}
			if p.NextCursor == "" {
				return
			}
			sum := sha256.Sum256([]byte(p.NextCursor))
			if seen[sum] {
				c.logger.Warn("mcp: server repeated a cursor; stopped paging", "method", method, "cursor", preview([]byte(p.NextCursor)))
				return
			}
			seen[sum] = true
			params = &listParams{Cursor: p.NextCursor}
		}
		c.logger.Warn("mcp: stopped paging after too many pages", "method", method, "pages", maxPages)
	}
}

// collect gathers a sequence into a slice.
func collect[T any](s iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for item, err := range s {
		if err != nil {
			return out, err
		}
		out = append(out, item)
	}
	return out, nil
}

// badResult is a result that does not decode: it matches ErrBadResult.
type badResult struct{ err error }

func (e *badResult) Error() string        { return ErrBadResult.Error() + ": " + e.err.Error() }
func (e *badResult) Is(target error) bool { return target == ErrBadResult }
func (e *badResult) Unwrap() error        { return e.err }
