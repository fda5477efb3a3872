package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// maxQueued bounds the backlog of incoming messages waiting for the
// dispatcher. Past it, log and progress notifications are dropped (and
// counted in a warning); requests and other notifications are always kept.
const maxQueued = 1024

// dispatcher serves the server's requests and notifications. jsonrpc2 calls
// Handle on its read goroutine, where waiting would stall every response, so
// Handle only enqueues; one goroutine (run) serves the queue in order.
type dispatcher struct {
	c       *Connection
	mu      sync.Mutex
	queue   []*jsonrpc2.Request
	dropped int
	wake    chan struct{}
}

func newDispatcher(c *Connection) *dispatcher {
	return &dispatcher{c: c, wake: make(chan struct{}, 1)}
}

// Handle implements jsonrpc2.Handler. It never blocks.
func (d *dispatcher) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	d.mu.Lock()
	if req.Notif && len(d.queue) >= maxQueued && lossy(req.Method) {
		d.dropped++
		d.mu.Unlock()
		return
	}
	d.queue = append(d.queue, req)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func lossy(method string) bool {
	return method == "notifications/message" || method == "notifications/progress"
}

// run serves the queue until the connection ends, then marks it done.
func (d *dispatcher) run(disconnect <-chan struct{}) {
	defer close(d.c.done)
	var batch []*jsonrpc2.Request
	for {
		select {
		case <-disconnect:
			return
		case <-d.wake:
		}
		for {
			d.mu.Lock()
			batch, d.queue = d.queue, batch[:0]
			dropped := d.dropped
			d.dropped = 0
			d.mu.Unlock()
			if dropped > 0 {
				d.c.logger.Warn("mcp: dropped notifications from a server that sends faster than they are handled", "count", dropped)
			}
			if len(batch) == 0 {
				break
			}
			for i, req := range batch {
				d.serve(req)
				batch[i] = nil
			}
		}
	}
}

func (d *dispatcher) serve(req *jsonrpc2.Request) {
	if req.Notif {
		d.notification(req)
		return
	}
	ctx := context.Background()
	switch req.Method {
	case "ping":
		d.reply(ctx, req.ID, json.RawMessage("{}"), nil)
	default:
		d.reply(ctx, req.ID, nil, &jsonrpc2.Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method})
	}
}

func (d *dispatcher) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "notifications/tools/list_changed":
		if f := d.c.opts.ToolListChanged; f != nil {
			f(d.c)
		}
	default:
		d.c.logger.Debug("mcp: notification", "method", req.Method)
	}
}

func (d *dispatcher) reply(ctx context.Context, id jsonrpc2.ID, result any, rpcErr *jsonrpc2.Error) {
	var err error
	if rpcErr != nil {
		err = d.c.conn.ReplyWithError(ctx, id, rpcErr)
	} else {
		err = d.c.conn.Reply(ctx, id, result)
	}
	if err != nil {
		d.c.logger.Debug("mcp: reply failed", "id", id.String(), "err", err)
	}
}
