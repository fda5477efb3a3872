package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/mcplug/mcplug/internal/jsonrpc"
	"github.com/mcplug/mcplug/internal/mcpheader"
)

// defaultInputSchema stands in for a tool's missing inputSchema.
var defaultInputSchema = json.RawMessage(`{"type":"object"}`)

// Tools returns the server's tools, every page of tools/list. A tool
// without a name, or whose inputSchema is not an object, is dropped, and
// one without an inputSchema gets {"type":"object"} (each logged); a
// repeated cursor ends the listing. The list is cached while known to be
// current: on a legacy server that announces listChanged, until
// notifications/tools/list_changed; on a modern one, for the ttlMs it
// gave (the smallest of its pages), or until a list change on
// subscriptions/listen when Options.ToolListChanged is set.
func (c *Connection) Tools(ctx context.Context) ([]Tool, error) {
	if tools, ok := c.toolCache.Get(); ok {
		return tools, nil
	}
	tools, err := collect(c.AllTools(ctx))
	if err != nil {
		return nil, err
	}
	return tools, nil
}

// AllTools yields the tools as Tools lists them, fetching each page of
// tools/list only when the loop reaches it: a loop that stops early
// fetches no more pages. A listing walked to its end is cached as Tools
// caches it; a cached list is yielded without a request. An error ends
// the sequence.
func (c *Connection) AllTools(ctx context.Context) iter.Seq2[Tool, error] {
	return func(yield func(Tool, error) bool) {
		if tools, ok := c.toolCache.Get(); ok {
			for _, t := range tools {
				if !yield(t, nil) {
					return
				}
			}
			return
		}
		gen := c.toolCache.Generation()
		ttl, first := time.Duration(0), true
		var tools []Tool
		for raw, err := range seqHints[json.RawMessage](ctx, c.pager(), "tools/list", "tools", func(h CacheHints) {
			if first || h.ttl() < ttl {
				ttl, first = h.ttl(), false
			}
		}) {
			if err != nil {
				yield(Tool{}, err)
				return
			}
			if t, ok := c.checkTool(raw); ok {
				c.schemas.add([]Tool{t}, c.logger)
				c.taskSupport.Store(t.Name, toolTaskSupport(&t))
				tools = append(tools, t)
				if !yield(t, nil) {
					return
				}
			}
		}
		c.era().keepTools(c, tools, gen, ttl)
	}
}

// checkTool decodes a tool of a page (raw is part of the page, valid
// JSON) and checks it. The tool is decoded from a copy of its own, which
// its fields point into: a tool kept must not keep its whole page (a
// large cursor, the other tools).
func (c *Connection) checkTool(raw json.RawMessage) (Tool, bool) {
	var t Tool
	if err := decodeTool(bytes.Clone(raw), &t); err != nil {
		c.logger.Warn("mcp: dropped a tool that does not decode", "err", err, "tool", preview(raw))
		return t, false
	}
	if t.Name == "" {
		c.logger.Warn("mcp: dropped a tool without a name", "tool", preview(raw))
		return t, false
	}
	schema := bytes.TrimSpace(t.InputSchema)
	switch {
	case len(schema) == 0 || bytes.Equal(schema, []byte("null")):
		c.logger.Warn("mcp: tool has no inputSchema; using {\"type\":\"object\"}", "tool", t.Name)
		t.InputSchema = defaultInputSchema
	case schema[0] != '{':
		c.logger.Warn("mcp: dropped a tool whose inputSchema is not an object", "tool", t.Name, "inputSchema", preview(schema))
		return t, false
	}
	if c.overHTTP() {
		// Streamable HTTP mirrors x-mcp-header parameters into headers; a
		// tool whose annotations break the rules is left out, as the spec
		// asks, and the others stay.
		hs, err := mcpheader.ForTool(t.InputSchema)
		if err != nil {
			c.logger.Warn("mcp: dropped a tool with an invalid x-mcp-header", "tool", t.Name, "err", err)
			return t, false
		}
		c.paramHeaders.Store(t.Name, hs)
	}
	return t, true
}

// CallTool calls the named tool with args, which must encode to a JSON
// object (a struct, a map, a json.RawMessage); nil sends {}. A tool that
// declared an outputSchema (in the last listing) has its structuredContent
// validated ([*OutputSchemaError]). A tool that ran and failed is a result
// with IsError set; the error reports a call that failed: a JSON-RPC
// [*Error] (an unknown tool, say), a malformed result (ErrBadResult), ctx
// ending, or the connection ending (ErrClosed).
func (c *Connection) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	scratch := callScratchPool.Get().(*callScratch)
	defer scratch.release()
	arguments, err := encodeArguments(scratch.args[:0], args)
	if err != nil {
		return nil, err
	}
	e := c.era()
	mirrored := e.mirrorsToolHeaders(c)
	callCtx, err := c.toolHeaders(ctx, mirrored, name, arguments)
	if err != nil {
		return nil, err
	}
	scratch.call = jsonrpc.ToolCall{Name: name, Arguments: arguments}
	var params any = &scratch.call // not boxed: nothing keeps params past the call
	var progress func(Progress)    // for a task's status messages
	asked := e.needsTask(ctx, c, name)
	if asked {
		params = taskCallParams{Name: name, Arguments: arguments, Augmentation: taskRequest{TTL: taskTTL(ctx)}}
		if o := callOptionsFrom(ctx); o != nil {
			progress = o.Progress
		}
		var stop func()
		callCtx, stop = c.keepProgress(callCtx)
		defer stop()
	}
	var budget *inputBudget // what the call's input may cost, shared with its task
	raw, err := c.roundTripWith(callCtx, "tools/call", params, &budget)
	if mirrored && err != nil && isCode(err, CodeHeaderMismatch) && ctx.Err() == nil {
		// The server's idea of the tool's x-mcp-header parameters differs
		// from the last listing: list the tools again and retry, once, as
		// the spec suggests.
		c.toolCache.Invalidate()
		if _, lerr := c.Tools(ctx); lerr == nil {
			if callCtx, err = c.toolHeaders(ctx, mirrored, name, arguments); err != nil {
				return nil, err
			}
			raw, err = c.roundTripWith(callCtx, "tools/call", params, &budget)
		}
	}
	if err != nil {
		return nil, err
	}
	if raw, err = c.era().callResult(ctx, c, raw, asked, progress, budget); err != nil {
		return nil, err
	}
	res, err := decodeToolResult(raw) // raw is ours: the connection copied it
	if err != nil {
		return nil, err
	}
	if !asked && len(res.Content) == 0 && res.StructuredContent == nil {
		if res, err = c.era().unaskedTask(ctx, c, raw, res, progress, budget); err != nil {
			return nil, err
		}
	}
	if err := c.schemas.validate(ctx, name, res); err != nil {
		return nil, err
	}
	return res, nil
}

// isCode reports whether err is the server's JSON-RPC error code.
func isCode(err error, code int64) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// toolHeaders returns ctx carrying the Mcp-Param headers of a call to tool
// name with arguments, when the call goes over Streamable HTTP to a modern
// server (mirrored).
func (c *Connection) toolHeaders(ctx context.Context, mirrored bool, name string, arguments json.RawMessage) (context.Context, error) {
	if !mirrored {
		return ctx, nil
	}
	hs, ok := c.paramHeaders.Load(name)
	if !ok {
		return ctx, nil
	}
	h, err := mcpheader.Values(hs.([]mcpheader.Param), arguments)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errHeaders, err)
	}
	return withHeaders(ctx, h), nil
}

// callScratch is what a CallTool needs while it runs: a buffer for its
// encoded arguments, and its params.
type callScratch struct {
	args []byte
	call jsonrpc.ToolCall
}

// callScratchPool holds the callScratch of calls that have returned.
var callScratchPool = sync.Pool{New: func() any { return &callScratch{args: make([]byte, 0, 256)} }}

// release gives s back to callScratchPool, keeping no reference to the
// call's name or arguments (which may be the caller's own bytes).
func (s *callScratch) release() {
	s.call = jsonrpc.ToolCall{}
	callScratchPool.Put(s)
}

// errHeaders is the error of a tool call whose arguments cannot be
// mirrored into the headers the tool's schema asks for
// (internal/mcpheader).
var errHeaders = errors.New("mcp: the arguments do not fit the tool's x-mcp-header parameters")

// taskSupportOf is the execution.taskSupport of the tool name as last
// listed; the tools are listed when the Connection has not seen it.
func (c *Connection) taskSupportOf(ctx context.Context, name string) string {
	if v, ok := c.taskSupport.Load(name); ok {
		return v.(string)
	}
	if _, err := c.Tools(ctx); err != nil {
		return ""
	}
	v, _ := c.taskSupport.LoadOrStore(name, "") // a tool not listed is not listed again for it
	return v.(string)
}
