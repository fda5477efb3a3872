package mcp_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLargeRequestsOverStdio(t *testing.T) {
	// Requests larger than a pipe holds are written in parts, whole and in
	// order, also while other callers write.
	noLeaks(t)
	c := connect(t, child("basic"))
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			text := strings.Repeat(string(rune('a'+g)), 300<<10+g)
			if g%2 == 1 {
				text = fmt.Sprintf("small %d", g)
			}
			for range 3 {
				res, err := c.CallTool(ctxTimeout(t, 10*time.Second), "echo", map[string]string{"text": text})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, len(text), len(res.Text()))
				assert.True(t, res.Text() == text, "caller %d got its own text back", g)
			}
		})
	}
	wg.Wait()
}
