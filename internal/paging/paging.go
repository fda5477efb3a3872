// Package paging walks the pages of a list method, cursor after cursor,
// against a server that may never stop: a cursor it repeats ends the walk,
// and so does the MaxPages-th page. Cursors are remembered by their
// SHA-256 digest, so the memory the cycle check keeps is 32 bytes a page,
// however long the server's cursors are.
package paging

import (
	"crypto/sha256"
	"iter"
)

// MaxPages bounds how many pages a walk fetches.
const MaxPages = 10000

// All yields every item of every page fetch returns, in order, starting
// with the cursor "". An error is yielded once, last. When the walk stops
// early (a repeated cursor, MaxPages), warn is told why, with the cursor
// (its start) or the number of pages.
func All[T any](fetch func(cursor string) (items []T, next string, err error), warn func(msg string, args ...any)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		seen := map[[sha256.Size]byte]bool{}
		cursor := ""
		for range MaxPages {
			items, next, err := fetch(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			sum := sha256.Sum256([]byte(next))
			if seen[sum] {
				warn("mcp: server repeated a cursor; stopped paging", "cursor", start(next))
				return
			}
			seen[sum] = true
			cursor = next
		}
		warn("mcp: stopped paging after too many pages", "pages", MaxPages)
	}
}

// start is the start of a cursor, for a log line.
func start(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
