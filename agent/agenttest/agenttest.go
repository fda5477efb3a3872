// Package agenttest is a scripted agent.Model for the tests of programs
// built on package agent: it answers each request with the next reply of
// its script and records the request, so that a test checks what its
// agent sent the model (the tools, the system prompt and its sections,
// the messages and tool results) with no model and no network.
//
//	m := agenttest.New(
//		agenttest.Call("mcp__calc__add", map[string]int{"a": 17, "b": 25}),
//		agenttest.Text("17 + 25 = 42."),
//	)
//	a := &agent.Agent{Model: m, Tools: []agent.ToolProvider{manager}}
//	answer, err := a.Chat(ctx, "add 17 and 25")
//	// m.Request(1): the tool's result, as the model was sent it
//	results := agenttest.ToolResults(m.Request(1))
//
// A Model is an agent.ImageModel and an agent.SearchingModel whose
// answers its Images and Searches fields give (both false: images are
// summarised as text, and the agent offers its own tool_search).
package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
)

// A Reply is one turn of the script: the model's answer to a request,
// which it may look at.
type Reply func(req *agent.Request) (*agent.Response, error)

// Model is a scripted agent.Model. Its zero value has no replies (Add
// gives some); it is safe for concurrent use.
type Model struct {
	// Images makes AcceptsImages report true: tool results' images reach
	// the model as images.
	Images bool
	// Searches makes SearchesTools report true: deferred tools come in
	// Request.Deferred, and the agent offers no tool_search.
	Searches bool

	mu       sync.Mutex
	replies  []Reply
	requests []*agent.Request
	next     int // the next reply
	calls    int // tool calls given an ID
}

var (
	_ agent.ImageModel     = (*Model)(nil)
	_ agent.SearchingModel = (*Model)(nil)
)

// ErrNoReply is matched by the error of a request past the end of the
// script.
var ErrNoReply = errors.New("agenttest: no reply left in the script")

// New returns a Model that answers with replies, in order.
func New(replies ...Reply) *Model { return &Model{replies: replies} }

// Add appends replies to the script.
func (m *Model) Add(replies ...Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replies = append(m.replies, replies...)
}

// AcceptsImages reports m.Images.
func (m *Model) AcceptsImages() bool { return m.Images }

// SearchesTools reports m.Searches.
func (m *Model) SearchesTools() bool { return m.Searches }

// Generate records a copy of req and answers it with the script's next
// reply: its text blocks go to onText, and a tool call without an ID gets
// one ("toolu_1", "toolu_2", …). A request past the end of the script is
// recorded too, and fails with ErrNoReply (a reply Add gives later
// answers the next request); an ended ctx fails with its error.
func (m *Model) Generate(ctx context.Context, req *agent.Request, onText func(string)) (*agent.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec := copyRequest(req)
	m.mu.Lock()
	m.requests = append(m.requests, rec)
	if m.next >= len(m.replies) {
		n := len(m.requests)
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: request %d, and the script has %d replies", ErrNoReply, n, len(m.replies))
	}
	reply := m.replies[m.next]
	m.next++
	m.mu.Unlock()
	resp, err := reply(copyRequest(req))
	if err != nil || resp == nil {
		return resp, err
	}
	out := &agent.Response{StopReason: resp.StopReason, Content: slices.Clone(resp.Content)}
	m.mu.Lock()
	for i, b := range out.Content {
		if b.Type == agent.BlockToolUse && b.ID == "" {
			m.calls++
			out.Content[i].ID = fmt.Sprintf("toolu_%d", m.calls)
		}
	}
	m.mu.Unlock()
	if onText != nil {
		for _, b := range out.Content {
			if b.Type == agent.BlockText && b.Text != "" {
				onText(b.Text)
			}
		}
	}
	return out, nil
}

// Requests returns the requests the Model was sent so far, as they were
// sent (copies: they are the test's to keep).
func (m *Model) Requests() []*agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Request returns the i-th request the Model was sent, from 0, or nil
// when it was not sent that many.
func (m *Model) Request(i int) *agent.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 || i >= len(m.requests) {
		return nil
	}
	return m.requests[i]
}

// Text is a reply of text, that ends the model's turn.
func Text(text string) Reply {
	return Respond(&agent.Response{StopReason: agent.StopEndTurn, Content: []agent.Block{{Type: agent.BlockText, Text: text}}})
}

// A ToolCall is one call of a tool in a reply: Args is encoded as JSON
// (a json.RawMessage or a []byte as it is).
type ToolCall struct {
	Name string
	Args any
}

// Call is a reply that calls one tool with args (see ToolCall).
func Call(name string, args any) Reply { return Calls(ToolCall{Name: name, Args: args}) }

// Calls is a reply that calls tools, in order.
func Calls(calls ...ToolCall) Reply {
	resp := &agent.Response{StopReason: agent.StopToolUse}
	for _, c := range calls {
		var input json.RawMessage
		switch a := c.Args.(type) {
		case json.RawMessage:
			input = a
		case []byte:
			input = a
		case nil:
			input = json.RawMessage("{}")
		default:
			b, err := json.Marshal(a)
			if err != nil {
				panic(fmt.Sprintf("agenttest: the arguments of %s do not encode: %v", c.Name, err))
			}
			input = b
		}
		resp.Content = append(resp.Content, agent.Block{Type: agent.BlockToolUse, Name: c.Name, Input: input})
	}
	return Respond(resp)
}

// Respond is a reply of resp as it is (any blocks, any StopReason).
func Respond(resp *agent.Response) Reply {
	return func(*agent.Request) (*agent.Response, error) { return resp, nil }
}

// Fail is a reply that fails with err, as a model's API that fails.
func Fail(err error) Reply {
	return func(*agent.Request) (*agent.Response, error) { return nil, err }
}

// ToolNames are the names of the tools req offered the model, in order.
func ToolNames(req *agent.Request) []string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	return names
}

// SectionText is the text of req's section titled title (see
// agent.Section), and whether it has one.
func SectionText(req *agent.Request, title string) (string, bool) {
	for _, s := range req.Sections {
		if s.Title == title {
			return s.Text, true
		}
	}
	return "", false
}

// ToolResults are the tool results req's last message carries: what the
// model was sent of the tools it called.
func ToolResults(req *agent.Request) []agent.Block {
	if len(req.Messages) == 0 {
		return nil
	}
	var out []agent.Block
	for _, b := range req.Messages[len(req.Messages)-1].Content {
		if b.Type == agent.BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}

// ResultText is a tool result's text blocks, joined.
func ResultText(result agent.Block) string {
	var text string
	for _, c := range result.Content {
		if c.Type == agent.BlockText {
			text += c.Text
		}
	}
	return text
}

// copyRequest is a copy of req with slices of its own (a tool's
// annotations are shared: the agent never changes them).
func copyRequest(req *agent.Request) *agent.Request {
	return &agent.Request{
		System:   req.System,
		Sections: slices.Clone(req.Sections),
		Messages: copyMessages(req.Messages),
		Tools:    copyTools(req.Tools),
		Deferred: copyTools(req.Deferred),
	}
}

func copyMessages(ms []agent.Message) []agent.Message {
	if ms == nil {
		return nil
	}
	out := make([]agent.Message, len(ms))
	for i, m := range ms {
		out[i] = agent.Message{Role: m.Role, Content: copyBlocks(m.Content)}
	}
	return out
}

func copyBlocks(bs []agent.Block) []agent.Block {
	if bs == nil {
		return nil
	}
	out := make([]agent.Block, len(bs))
	for i, b := range bs {
		b.Input = slices.Clone(b.Input)
		b.ToolNames = slices.Clone(b.ToolNames)
		b.Content = copyBlocks(b.Content)
		out[i] = b
	}
	return out
}

func copyTools(ts []mcp.Tool) []mcp.Tool {
	if ts == nil {
		return nil
	}
	out := make([]mcp.Tool, len(ts))
	for i, t := range ts {
		t.InputSchema = slices.Clone(t.InputSchema)
		t.OutputSchema = slices.Clone(t.OutputSchema)
		t.Execution = slices.Clone(t.Execution)
		t.Meta = slices.Clone(t.Meta)
		t.Icons = slices.Clone(t.Icons)
		out[i] = t
	}
	return out
}
