package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"time"

	"github.com/mcplug/mcplug/internal/ndjson"
	"github.com/mcplug/mcplug/internal/paging"
)

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

// CacheHints are a 2026-07-28 result's caching hints: TTLMs, how long in
// milliseconds it may be taken as fresh (nil: stale at once), and
// CacheScope, "public" or "private".
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

// pager is what a listing needs of a Connection: its call, and its logger
// for what the pages get wrong.
type pager struct {
	call   func(ctx context.Context, method string, params, result any) error
	logger *slog.Logger
}

// listPage fetches one page of method, whose items are under key.
func listPage[T any](ctx context.Context, c pager, method, key string, params *listParams) (*page[T], error) {
	var p any
	if params != nil && (params.Cursor != "" || params.Meta != nil) {
		p = params
	}
	var raw json.RawMessage // valid JSON, the call's own (see Connection.decode)
	if err := c.call(ctx, method, p, &raw); err != nil {
		return nil, err
	}
	// The members by name, the last of a name winning, as encoding/json
	// would decode them into a map.
	var items, next, ttl, scope []byte
	if !ndjson.Members(raw, func(k, v []byte) bool {
		switch string(memberName(k)) {
		case key:
			items = v
		case "nextCursor":
			next = v
		case "ttlMs":
			ttl = v
		case "cacheScope":
			scope = v
		}
		return true
	}) {
		return nil, wrap(method, ErrBadResult) // null, or not an object
	}
	out := &page[T]{}
	if items != nil {
		if err := decodeItems(items, &out.Items); err != nil {
			return nil, wrap(method, &badResult{err})
		}
	}
	if next != nil {
		json.Unmarshal(next, &out.NextCursor)
	}
	if ttl != nil {
		var n int64
		if json.Unmarshal(ttl, &n) == nil {
			out.TTLMs = &n
		}
	}
	if scope != nil {
		json.Unmarshal(scope, &out.CacheScope)
	}
	return out, nil
}

// decodeItems decodes a page's items, a JSON array. Raw items (the tools,
// which are checked one by one) are the array's elements as they stand,
// with no second decode.
func decodeItems[T any](items []byte, dst *[]T) error {
	raw, ok := any(dst).(*[]json.RawMessage)
	if !ok {
		return json.Unmarshal(items, dst)
	}
	if string(items) == "null" {
		return nil
	}
	var elems []json.RawMessage
	if !ndjson.Elements(items, func(v []byte) bool {
		elems = append(elems, v)
		return true
	}) {
		return errors.New("the items are not an array")
	}
	*raw = elems
	return nil
}

// memberName is the name of a member whose key, between its quotes, is
// k: k itself unless it has escapes.
func memberName(k []byte) []byte {
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	var name string
	json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &name)
	return []byte(name)
}

// seq yields every item of every page of method (see internal/paging).
func seq[T any](ctx context.Context, c pager, method, key string) iter.Seq2[T, error] {
	return seqHints[T](ctx, c, method, key, nil)
}

// seqHints is seq that also hands each page's cache hints to hints (when
// not nil).
func seqHints[T any](ctx context.Context, c pager, method, key string, hints func(CacheHints)) iter.Seq2[T, error] {
	return paging.All(func(cursor string) ([]T, string, error) {
		p, err := listPage[T](ctx, c, method, key, &listParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		if hints != nil {
			hints(p.CacheHints)
		}
		return p.Items, p.NextCursor, nil
	}, func(msg string, args ...any) {
		c.logger.Warn(msg, append([]any{"method", method}, args...)...)
	})
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
