package mcp

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// On a modern server (2026-07-28) change notifications come on a
// long-lived subscriptions/listen request, not unasked: the Connection
// keeps one open while it has something to listen for (a list-changed
// handler in Options, or a resource it subscribed to), with a filter of
// exactly those (and the tasks it follows), and opens it again when it
// ends (bounded backoff) or when the filter changes, until the Connection
// closes. The notifications reach
// the same Options handlers as a legacy server's.

// listener is the state of a Connection's subscriptions/listen.
type listener struct {
	mu      sync.Mutex
	uris    map[string]bool    // resources subscribed to
	running bool               // the listen goroutine runs
	restart context.CancelFunc // ends the listen in flight, to open it anew
}

// subscriptionFilter is the notifications filter of subscriptions/listen.
type subscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are the tasks followed (the tasks extension): their status
	// comes as notifications/tasks.
	TaskIDs []string `json:"taskIds,omitempty"`
}

// filter returns what the Connection listens for, and whether that is
// anything.
func (c *Connection) filter() (subscriptionFilter, bool) {
	c.listen.mu.Lock()
	defer c.listen.mu.Unlock()
	f := subscriptionFilter{
		ToolsListChanged:      c.opts.ToolListChanged != nil,
		PromptsListChanged:    c.opts.PromptListChanged != nil,
		ResourcesListChanged:  c.opts.ResourceListChanged != nil,
		ResourceSubscriptions: slices.Sorted(maps.Keys(c.listen.uris)),
	}
	if !c.opts.DisableTasks {
		f.TaskIDs = c.tasks.ids()
	}
	return f, f.ToolsListChanged || f.PromptsListChanged || f.ResourcesListChanged || len(f.ResourceSubscriptions) > 0 || len(f.TaskIDs) > 0
}

// startListening opens subscriptions/listen when there is something to
// listen for and no listen runs; otherwise it makes the one in flight
// start again with the current filter.
func (c *Connection) startListening() {
	if _, some := c.filter(); !some {
		c.listen.mu.Lock()
		if c.listen.restart != nil {
			c.listen.restart()
		}
		c.listen.mu.Unlock()
		return
	}
	c.listen.mu.Lock()
	defer c.listen.mu.Unlock()
	if c.listen.running {
		if c.listen.restart != nil {
			c.listen.restart()
		}
		return
	}
	if c.life().Err() != nil {
		return
	}
	c.listen.running = true
	c.handlers.Add(1) // the dispatcher waits for it when the connection ends
	go c.listenLoop()
}

// listenLoop keeps subscriptions/listen open until the Connection ends.
// Bounds of the wait before subscriptions/listen is opened again after it
// failed: doubling from the first to the last.
const (
	listenFirstBackoff = time.Second
	listenMaxBackoff   = 30 * time.Second
)

func (c *Connection) listenLoop() {
	defer c.handlers.Done()
	defer func() {
		c.listen.mu.Lock()
		c.listen.running = false
		c.listen.mu.Unlock()
	}()
	backoff := listenFirstBackoff
	for c.life().Err() == nil {
		f, some := c.filter()
		if !some {
			return
		}
		ctx, cancel := context.WithCancel(context.WithValue(c.life(), backgroundKey{}, true))
		c.listen.mu.Lock()
		c.listen.restart = cancel
		c.listen.mu.Unlock()
		start := time.Now()
		_, err := c.roundTripOnce(ctx, "subscriptions/listen", map[string]any{"notifications": f})
		restarted := ctx.Err() != nil && c.life().Err() == nil
		cancel()
		switch {
		case c.life().Err() != nil:
			return
		case restarted: // the filter changed: open it again at once
			continue
		case err != nil:
			c.logger.Debug("mcp: subscriptions/listen ended; opening it again", "err", err, "after", backoff)
		}
		if time.Since(start) > listenMaxBackoff { // it served a while: the next break starts the backoff over
			backoff = listenFirstBackoff
		}
		timer := time.NewTimer(backoff)
		select {
		case <-timer.C:
		case <-c.life().Done():
			timer.Stop()
			return
		}
		backoff = min(2*backoff, listenMaxBackoff)
	}
}

func (c *Connection) subscribe(ctx context.Context, params *SubscribeParams, on bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if params == nil || params.URI == "" {
		return errors.New("mcp: Subscribe needs a URI")
	}
	if c.ended() {
		return &closedError{cause: c.getCause()}
	}
	c.listen.mu.Lock()
	if c.listen.uris == nil {
		c.listen.uris = map[string]bool{}
	}
	if on {
		c.listen.uris[params.URI] = true
	} else {
		delete(c.listen.uris, params.URI)
	}
	c.listen.mu.Unlock()
	c.era().listen(c)
	return nil
}
