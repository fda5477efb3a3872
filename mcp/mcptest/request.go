package mcptest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcplug/mcplug/mcp"
)

// Request is a request of the client, as a handler added to a Server sees
// it. Its methods ask the client for input (Sample, Elicit, Roots) and
// report progress.
//
// Asking for input works in both protocol eras. On a legacy request it is
// a request to the client, answered on the same connection. On a modern
// request (2026-07-28) the server cannot send requests: the first question
// not yet answered returns ErrInputRequired, the handler returns that
// error, and the Server answers with an InputRequiredResult; the client
// answers the question and sends the request again, and the handler runs
// again from the start, its earlier questions now answered. A handler that
// asks for input must therefore ask the same questions in the same order
// each time it runs, and do nothing it cannot repeat before its last
// question.
type Request struct {
	Method    string          // "tools/call", "resources/read" or "prompts/get"
	Name      string          // the tool's or the prompt's name
	URI       string          // resources/read: the URI read
	Arguments json.RawMessage // tools/call and prompts/get: the arguments as sent
	Params    json.RawMessage // all the params as sent
	Version   string          // the protocol version the request names; "" for a legacy request
	Session   *Session        // the client's session

	progressToken json.RawMessage
	answers       map[string]json.RawMessage // inputs answered so far, by key
	asked         int
	missing       map[string]any // the input request that ended this run
}

// ErrInputRequired is returned by a Request's Sample, Elicit and Roots on a
// modern request whose answer the client has not given yet. The handler
// must return it (or an error that wraps it) for the Server to ask the
// client.
var ErrInputRequired = errors.New("mcptest: the client must answer an input request first")

// newRequest reads the params of a request that a handler serves.
func newRequest(s *Session, m *Message) *Request {
	var p struct {
		Name           string                     `json:"name"`
		URI            string                     `json:"uri"`
		Arguments      json.RawMessage            `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   string                     `json:"requestState"`
		Meta           struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Version       string          `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	r := &Request{
		Method: m.Method, Name: p.Name, URI: p.URI, Arguments: p.Arguments, Params: m.Params,
		Version: p.Meta.Version, Session: s, progressToken: p.Meta.ProgressToken,
	}
	if !r.modern() {
		r.Version = ""
		return r
	}
	r.answers = map[string]json.RawMessage{}
	if state, err := base64.RawURLEncoding.DecodeString(p.RequestState); err == nil {
		json.Unmarshal(state, &r.answers)
	}
	for k, v := range p.InputResponses {
		r.answers[k] = v
	}
	return r
}

func (r *Request) modern() bool { return r.Version >= mcp.LatestProtocolVersion }

// Bind decodes the request's arguments into v.
func (r *Request) Bind(v any) error {
	if len(r.Arguments) == 0 {
		return json.Unmarshal([]byte("{}"), v)
	}
	return json.Unmarshal(r.Arguments, v)
}

// Sample asks the client to sample its model (sampling/createMessage).
func (r *Request) Sample(ctx context.Context, p *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	var res struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := r.ask(ctx, "sampling/createMessage", p, &res); err != nil {
		return nil, err
	}
	out := &mcp.CreateMessageResult{Role: res.Role, Model: res.Model, StopReason: res.StopReason}
	if c := bytes.TrimSpace(res.Content); len(c) > 0 && c[0] == '[' {
		if err := json.Unmarshal(c, &out.Content); err != nil {
			return nil, fmt.Errorf("mcptest: the client's sampling result: %w", err)
		}
	} else if len(c) > 0 {
		var one mcp.Content
		if err := json.Unmarshal(c, &one); err != nil {
			return nil, fmt.Errorf("mcptest: the client's sampling result: %w", err)
		}
		out.Content = []mcp.Content{one}
	}
	return out, nil
}

// Elicit asks the user, through the client, for information
// (elicitation/create).
func (r *Request) Elicit(ctx context.Context, p *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	var res mcp.ElicitResult
	if err := r.ask(ctx, "elicitation/create", p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Roots asks the client for its roots (roots/list).
func (r *Request) Roots(ctx context.Context) ([]mcp.Root, error) {
	var res struct {
		Roots []mcp.Root `json:"roots"`
	}
	if err := r.ask(ctx, "roots/list", map[string]any{}, &res); err != nil {
		return nil, err
	}
	return res.Roots, nil
}

// Progress reports the request's progress to the client, when the client
// asked for it (a progressToken in the request's _meta); otherwise it does
// nothing. total and message are left out when zero.
func (r *Request) Progress(progress, total float64, message string) error {
	if len(r.progressToken) == 0 {
		return nil
	}
	p := map[string]any{"progressToken": r.progressToken, "progress": progress}
	if total != 0 {
		p["total"] = total
	}
	if message != "" {
		p["message"] = message
	}
	return r.Session.Notify("notifications/progress", p)
}

// ask sends a request to the client (legacy), or answers it from the
// request's input responses (modern), or records it as the input the
// client must give first.
func (r *Request) ask(ctx context.Context, method string, params, out any) error {
	if !r.modern() {
		return r.Session.Call(ctx, method, params, out)
	}
	r.asked++
	key := "input-" + strconv.Itoa(r.asked)
	if raw, ok := r.answers[key]; ok {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("mcptest: the client's answer to %s: %w", method, err)
		}
		return nil
	}
	r.missing = map[string]any{key: map[string]any{"method": method, "params": params}}
	return ErrInputRequired
}

// inputRequired is the InputRequiredResult for the question that ended
// the handler, with the answers so far as the request state.
func (r *Request) inputRequired() map[string]any {
	state, _ := json.Marshal(r.answers)
	return map[string]any{
		"resultType":    "input_required",
		"inputRequests": r.missing,
		"requestState":  base64.RawURLEncoding.EncodeToString(state),
	}
}

// serve runs a handler of the request m in its own goroutine, on a ctx
// that ends when the client cancels the request or the session ends, and
// sends what it returns: its result (marked complete on a modern
// request), an InputRequiredResult, or an error (see onError).
func (srv *Server) serve(s *Session, m *Message, handler func(ctx context.Context, r *Request) (any, error), onError func(err error) any) {
	ctx, cancel := context.WithCancelCause(s.ctx)
	key := inflightKey{s.key, string(m.ID)}
	srv.mu.Lock()
	if srv.inflight == nil {
		srv.inflight = map[inflightKey]context.CancelCauseFunc{}
	}
	srv.inflight[key] = cancel
	srv.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			srv.mu.Lock()
			delete(srv.inflight, key)
			srv.mu.Unlock()
			cancel(nil)
		}()
		r := newRequest(s, m)
		res, err := handler(ctx, r)
		if errors.Is(context.Cause(ctx), errCancelled) || s.ctx.Err() != nil {
			return // cancelled requests get no answer; ended sessions take none
		}
		rpcErr, isRPC := err.(*mcp.Error)
		switch {
		case errors.Is(err, ErrInputRequired) && r.missing != nil:
			s.Reply(m.ID, r.inputRequired())
		case isRPC:
			e := map[string]any{"code": rpcErr.Code, "message": rpcErr.Message}
			if len(rpcErr.Data) > 0 {
				e["data"] = rpcErr.Data
			}
			s.Send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": e})
		case err != nil:
			if onError == nil {
				s.ReplyError(m.ID, mcp.CodeInternalError, err.Error())
				return
			}
			s.Reply(m.ID, completed(r, onError(err)))
		default:
			s.Reply(m.ID, completed(r, res))
		}
	}()
}

// completed adds resultType "complete" to the result of a modern request.
func completed(r *Request, res any) any {
	if !r.modern() {
		return res
	}
	b, err := json.Marshal(res)
	if err != nil {
		return res
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil || fields == nil {
		return res
	}
	fields["resultType"] = json.RawMessage(`"complete"`)
	return fields
}
