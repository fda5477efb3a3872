// Package mockllm is a local HTTP server that speaks the Anthropic Messages
// API (blocking and SSE streaming) and replays a scripted scenario: turn N
// answers request N. It records every request, so tests can check what a
// client sent. Point a real client at URL (ANTHROPIC_BASE_URL).
package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Turn is one scripted reply: text, a search of the deferred tools, tool
// calls (in that order), any of them.
type Turn struct {
	Text      string
	Search    *Search
	ToolCalls []ToolCall
}

// Search is the API's own tool search in a reply: a server_tool_use of the
// request's tool search tool with the query, then its
// tool_search_tool_result with a tool_reference for each tool found. As
// the API does, the mock refuses a request whose reply would refer to a
// tool that is not deferred in it, or would call a deferred tool that no
// search found (in this reply or earlier in the conversation).
type Search struct {
	Query string
	Found []string
}

// ToolCall is a tool_use block of a scripted reply.
type ToolCall struct {
	Name  string
	Input json.RawMessage // a JSON object; nil means {}
}

// Server is a running mock. Close stops it.
type Server struct {
	URL string // base URL, e.g. http://127.0.0.1:41234

	turns []Turn
	srv   *http.Server
	ln    net.Listener
	done  chan struct{}

	mu       sync.Mutex
	requests []json.RawMessage
	counts   []json.RawMessage
}

// Start starts a mock on a loopback port that plays turns in order.
func Start(turns ...Turn) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mockllm: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), turns: turns, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	s.srv = &http.Server{Handler: mux}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// Requests returns the bodies of the requests received so far.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.requests...)
}

// CountRequests returns the bodies of the count_tokens requests received
// so far (they are not among Requests, and play no turn).
func (s *Server) CountRequests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.counts...)
}

// countTokens answers POST /v1/messages/count_tokens with TokensOf the
// request's messages.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	var body json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || json.Unmarshal(body, &req) != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "mockllm: count_tokens: body is not a request")
		return
	}
	s.mu.Lock()
	s.counts = append(s.counts, body)
	s.mu.Unlock()
	var text strings.Builder
	for _, m := range req.Messages {
		for _, c := range m.Content {
			text.WriteString(c.Text)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]int{"input_tokens": TokensOf(text.String())})
}

// TokensOf is the mock's count of a text's tokens: one for every three
// bytes, so that a text four bytes a token leaves under a cap may be
// counted past it.
func TokensOf(text string) int { return (len(text) + 2) / 3 }

// Close stops the server and waits for it.
func (s *Server) Close() error {
	err := s.srv.Shutdown(context.Background())
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var body json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "mockllm: body is not JSON: "+err.Error())
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(body, &req)
	s.mu.Lock()
	s.requests = append(s.requests, body)
	n := len(s.requests)
	s.mu.Unlock()
	if n > len(s.turns) {
		apiError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("mockllm: no turn %d scripted (the scenario has %d)", n, len(s.turns)))
		return
	}
	if err := checkTools(body); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "mockllm: "+err.Error())
		return
	}
	if err := checkSearch(body, s.turns[n-1]); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "mockllm: "+err.Error())
		return
	}
	msg := message(n, req.Model, s.turns[n-1], searchToolName(body))
	if req.Stream {
		stream(w, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(msg)
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *searchResult   `json:"content,omitempty"`
}

type searchResult struct {
	Type           string      `json:"type"`
	ToolReferences []reference `json:"tool_references"`
}

type reference struct {
	Type     string `json:"type"`
	ToolName string `json:"tool_name"`
}

type msg struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []block `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

func message(n int, model string, t Turn, searchTool string) msg {
	m := msg{ID: fmt.Sprintf("msg_mock_%d", n), Type: "message", Role: "assistant", Model: model, Content: []block{}}
	if t.Text != "" {
		m.Content = append(m.Content, block{Type: "text", Text: t.Text})
	}
	if t.Search != nil {
		id := fmt.Sprintf("srvtoolu_mock_%d", n)
		input, _ := json.Marshal(map[string]string{"query": t.Search.Query})
		res := &searchResult{Type: "tool_search_tool_search_result", ToolReferences: []reference{}}
		for _, f := range t.Search.Found {
			res.ToolReferences = append(res.ToolReferences, reference{Type: "tool_reference", ToolName: f})
		}
		m.Content = append(m.Content, block{Type: "server_tool_use", ID: id, Name: searchTool, Input: input},
			block{Type: "tool_search_tool_result", ToolUseID: id, Content: res})
	}
	for i, c := range t.ToolCalls {
		input := c.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		m.Content = append(m.Content, block{Type: "tool_use", ID: fmt.Sprintf("toolu_mock_%d_%d", n, i+1), Name: c.Name, Input: input})
	}
	stop := "end_turn"
	if len(t.ToolCalls) > 0 {
		stop = "tool_use"
	}
	m.StopReason = &stop
	m.Usage.InputTokens, m.Usage.OutputTokens = 10, 10
	return m
}

// stream writes m as the Messages API's server-sent events.
func stream(w http.ResponseWriter, m msg) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	start := m
	start.Content, start.StopReason = []block{}, nil
	start.Usage.OutputTokens = 0
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, chunk := range chunks(b.Text) {
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": chunk}})
			}
		case "tool_use", "server_tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": b.Type, "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b.Input)}})
		case "tool_search_tool_result":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": m.StopReason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": m.Usage.OutputTokens}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// requestTools is what checkSearch reads of a request.
type requestTools struct {
	Tools []struct {
		Type         string `json:"type"`
		Name         string `json:"name"`
		DeferLoading bool   `json:"defer_loading"`
	} `json:"tools"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// searchToolName is the name of the request's tool search tool, or "".
func searchToolName(body []byte) string {
	var req requestTools
	json.Unmarshal(body, &req)
	for _, t := range req.Tools {
		if strings.HasPrefix(t.Type, "tool_search_tool_") {
			return t.Name
		}
	}
	return ""
}

// checkSearch refuses, as the API would, a reply that searches without a
// tool search tool, refers to a tool that is not deferred in the request,
// or calls a deferred tool no search has found. (A tool the request does
// not name at all is the script's business.)
func checkSearch(body []byte, t Turn) error {
	var req requestTools
	if err := json.Unmarshal(body, &req); err != nil {
		return err
	}
	deferred, loaded := map[string]bool{}, map[string]bool{}
	for _, tl := range req.Tools {
		if tl.DeferLoading {
			deferred[tl.Name] = true
		} else {
			loaded[tl.Name] = true
		}
	}
	found := map[string]bool{}
	for _, m := range req.Messages {
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_search_tool_result" && b.Content != nil {
				for _, r := range b.Content.ToolReferences {
					found[r.ToolName] = true
				}
			}
		}
	}
	if t.Search != nil {
		if searchToolName(body) == "" {
			return errors.New("the reply searches, and the request has no tool search tool")
		}
		for _, f := range t.Search.Found {
			if !deferred[f] {
				return fmt.Errorf("tool reference %q is unresolved: no deferred tool of that name", f)
			}
			found[f] = true
		}
	}
	for _, c := range t.ToolCalls {
		if deferred[c.Name] && !loaded[c.Name] && !found[c.Name] {
			return fmt.Errorf("tool %q is deferred, and no search found it", c.Name)
		}
	}
	return nil
}

// chunks splits text after each space, as a model streams words.
func chunks(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			return append(out, text)
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

func apiError(w http.ResponseWriter, status int, kind, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": message}})
}
