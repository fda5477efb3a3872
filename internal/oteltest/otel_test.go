package oteltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/mcplug/mcplug/mcp/otelmcp"
)

func TestMain(m *testing.M) {
	mcptest.Main(map[string]func() *mcptest.Server{"calc": func() *mcptest.Server { return calc(nil, nil) }})
	os.Exit(m.Run())
}

// calc is a server with the tools add, fail (a result with isError) and
// nothing else; versions nil is a legacy server. seen, if set, gets the
// _meta of each tools/call.
func calc(versions []string, seen func(meta map[string]any)) *mcptest.Server {
	srv := &mcptest.Server{Versions: versions}
	if seen != nil {
		srv.OnMessage = func(m *mcptest.Message) {
			if m.Method != "tools/call" {
				return
			}
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			seen(p.Meta)
		}
	}
	srv.AddTool(mcp.Tool{Name: "add"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		var in struct{ A, B int }
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		return mcptest.TextResult(fmt.Sprint(in.A + in.B)), nil
	})
	srv.AddTool(mcp.Tool{Name: "fail"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
		return nil, errors.New("it broke")
	})
	return srv
}

// telemetry is an Observer on the SDK, and what it recorded.
type telemetry struct {
	obs    *otelmcp.Observer
	tp     *sdktrace.TracerProvider
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
}

func newTelemetry(t *testing.T) *telemetry {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
	return &telemetry{
		obs:    otelmcp.New(&otelmcp.Options{TracerProvider: tp, MeterProvider: mp, Propagator: propagation.TraceContext{}}),
		tp:     tp,
		spans:  spans,
		reader: reader,
	}
}

// span returns the ended span named name, failing the test without one.
func (tm *telemetry) span(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	var names []string
	for _, s := range tm.spans.GetSpans() {
		if s.Name == name {
			return s
		}
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return tracetest.SpanStub{}
}

func attrs(s tracetest.SpanStub) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// histogram returns the data points of the histogram name.
func (tm *telemetry) histogram(t *testing.T, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tm.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "%s is a histogram", name)
				return h.DataPoints
			}
		}
	}
	return nil
}

// point returns the data point whose attributes include want.
func point(points []metricdata.HistogramDataPoint[float64], want ...attribute.KeyValue) (metricdata.HistogramDataPoint[float64], bool) {
	for _, p := range points {
		ok := true
		for _, kv := range want {
			if v, has := p.Attributes.Value(kv.Key); !has || v != kv.Value {
				ok = false
			}
		}
		if ok {
			return p, true
		}
	}
	return metricdata.HistogramDataPoint[float64]{}, false
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEveryCallIsTracedAndMeasured(t *testing.T) {
	type wire struct {
		name      string
		transport string
		connect   func(t *testing.T, srv *mcptest.Server) mcp.Transport
		onWire    bool // the test sees the server's messages
	}
	wires := []wire{
		{"in memory", "", func(t *testing.T, srv *mcptest.Server) mcp.Transport { return srv.Transport() }, true},
		{"Streamable HTTP", "tcp", func(t *testing.T, srv *mcptest.Server) mcp.Transport {
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			return &mcp.StreamableHTTPTransport{URL: ts.URL}
		}, true},
		{"stdio", "pipe", func(t *testing.T, srv *mcptest.Server) mcp.Transport {
			return &mcp.CommandTransport{Command: mcptest.Command("calc")}
		}, false},
	}
	for _, era := range []struct {
		name     string
		versions []string
	}{{"2025-11-25", nil}, {"2026-07-28", mcptest.Modern}} {
		for _, w := range wires {
			if w.name == "stdio" && era.versions != nil {
				continue // the child server is a legacy one
			}
			t.Run(era.name+" over "+w.name, func(t *testing.T) {
				tm := newTelemetry(t)
				var mu sync.Mutex
				var metas []map[string]any
				srv := calc(era.versions, func(meta map[string]any) {
					mu.Lock()
					metas = append(metas, meta)
					mu.Unlock()
				})
				ctx := ctxTimeout(t)
				c, err := mcp.Connect(ctx, w.connect(t, srv), &mcp.Options{Observer: tm.obs})
				require.NoError(t, err)
				version := c.InitializeResult().ProtocolVersion

				pctx, parent := tm.tp.Tracer("test").Start(ctx, "the caller")
				res, err := c.CallTool(pctx, "add", map[string]any{"a": 17, "b": 25})
				require.NoError(t, err)
				assert.Equal(t, "42", res.Text())
				res, err = c.CallTool(pctx, "fail", nil)
				require.NoError(t, err)
				assert.True(t, res.IsError)
				_, err = c.CallTool(pctx, "nope", nil)
				var rpcErr *mcp.Error
				require.ErrorAs(t, err, &rpcErr)
				parent.End()

				call := tm.span(t, "tools/call add")
				assert.Equal(t, trace.SpanKindClient, call.SpanKind)
				assert.Equal(t, parent.SpanContext().SpanID(), call.Parent.SpanID(), "a child of the caller's span")
				a := attrs(call)
				assert.Equal(t, "tools/call", a["mcp.method.name"])
				assert.Equal(t, "add", a["gen_ai.tool.name"])
				assert.Equal(t, "execute_tool", a["gen_ai.operation.name"])
				assert.NotEmpty(t, a["jsonrpc.request.id"])
				assert.Equal(t, version, a["mcp.protocol.version"])
				assert.Equal(t, w.transport, a["network.transport"])
				if w.transport == "tcp" {
					assert.Equal(t, "127.0.0.1", a["server.address"])
					assert.NotEmpty(t, a["server.port"])
					if era.versions == nil {
						assert.NotEmpty(t, a["mcp.session.id"], "the Streamable HTTP session")
					}
					assert.Equal(t, "http", a["network.protocol.name"])
					assert.Equal(t, "1.1", a["network.protocol.version"])
				} else {
					assert.NotContains(t, a, "network.protocol.name")
				}
				assert.Equal(t, codes.Unset, call.Status.Code)
				assert.NotContains(t, a, "error.type")

				failed := tm.span(t, "tools/call fail")
				assert.Equal(t, codes.Error, failed.Status.Code)
				assert.Equal(t, "tool_error", attrs(failed)["error.type"])
				refused := tm.span(t, "tools/call nope")
				assert.Equal(t, codes.Error, refused.Status.Code)
				assert.Equal(t, fmt.Sprint(rpcErr.Code), attrs(refused)["error.type"])
				assert.Equal(t, fmt.Sprint(rpcErr.Code), attrs(refused)["rpc.response.status_code"])
				assert.Equal(t, rpcErr.Message, refused.Status.Description)

				handshake := "initialize"
				if era.versions != nil {
					handshake = "server/discover"
				}
				hs := tm.span(t, handshake)
				want := "2025-11-25"
				if era.versions != nil {
					want = "2026-07-28"
				}
				assert.Equal(t, want, attrs(hs)["mcp.protocol.version"], "the version the handshake asks for, though none was pinned")

				if w.onWire {
					mu.Lock()
					require.NotEmpty(t, metas)
					want := fmt.Sprintf("00-%s-%s-01", call.SpanContext.TraceID(), call.SpanContext.SpanID())
					assert.Equal(t, want, metas[0]["traceparent"], "the call's span context, on the wire")
					mu.Unlock()
				}

				ops := tm.histogram(t, "mcp.client.operation.duration")
				p, ok := point(ops, attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", "add"))
				require.True(t, ok, "a point for tools/call add")
				assert.EqualValues(t, 1, p.Count)
				_, hasID := p.Attributes.Value("jsonrpc.request.id")
				assert.False(t, hasID, "no ids in metrics")
				p, ok = point(ops, attribute.String("gen_ai.tool.name", "fail"), attribute.String("error.type", "tool_error"))
				require.True(t, ok, "a point for the failed call")
				assert.EqualValues(t, 1, p.Count)

				assert.Empty(t, tm.histogram(t, "mcp.client.session.duration"), "the session goes on")
				require.NoError(t, c.Close())
				sessions := tm.histogram(t, "mcp.client.session.duration")
				require.Len(t, sessions, 1)
				assert.EqualValues(t, 1, sessions[0].Count)
				_, failedSession := sessions[0].Attributes.Value("error.type")
				assert.False(t, failedSession, "closed, not lost")
			})
		}
	}
}

func TestAServerRequestRunsUnderItsTraceContext(t *testing.T) {
	tm := newTelemetry(t)
	srv := calc(nil, nil)
	var session *mcptest.Session
	ready := make(chan struct{})
	srv.Handlers = map[string]mcptest.Handler{"notifications/initialized": func(s *mcptest.Session, m *mcptest.Message) {
		session = s
		close(ready)
	}}
	answered := make(chan *mcptest.Message, 1)
	srv.OnMessage = func(m *mcptest.Message) {
		if m.Method == "" && string(m.ID) == `"s1"` {
			answered <- m
		}
	}
	var seen trace.SpanContext
	c, err := mcp.Connect(ctxTimeout(t), srv.Transport(), &mcp.Options{Observer: tm.obs,
		Sampling: func(ctx context.Context, c *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			seen = trace.SpanContextFromContext(ctx)
			return &mcp.CreateMessageResult{Role: "assistant", Content: []mcp.Content{{Type: "text", Text: "ok"}}, Model: "m"}, nil
		}})
	require.NoError(t, err)
	defer c.Close()
	<-ready
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	// sample sends the client a sampling request in the trace of spanID
	// (run as a task of the client's when asTask) and waits for its answer.
	sample := func(t *testing.T, asTask bool) {
		params := map[string]any{"maxTokens": 5,
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}},
			"_meta":    map[string]any{"traceparent": "00-" + traceID + "-" + spanID + "-01"}}
		if asTask {
			params["task"] = map[string]any{}
		}
		require.NoError(t, session.Request("s1", "sampling/createMessage", params))
		select {
		case m := <-answered:
			require.Nil(t, m.Error)
		case <-time.After(30 * time.Second):
			t.Fatal("no answer to the sampling request")
		}
	}
	sample(t, false)
	assert.Equal(t, traceID, seen.TraceID().String(), "the handler runs in the server's trace")
	handler := tm.span(t, "sampling/createMessage")
	assert.Equal(t, trace.SpanKindServer, handler.SpanKind)
	assert.Equal(t, spanID, handler.Parent.SpanID().String(), "the server's span is the remote parent")
	assert.True(t, handler.Parent.IsRemote())
	assert.Equal(t, handler.SpanContext.SpanID(), seen.SpanID(), "the handler's ctx carries its span")
	served, ok := point(tm.histogram(t, "mcp.server.operation.duration"), attribute.String("mcp.method.name", "sampling/createMessage"))
	require.True(t, ok, "the request served is measured")
	assert.EqualValues(t, 1, served.Count)
	_, hasID := served.Attributes.Value("jsonrpc.request.id")
	assert.False(t, hasID, "without the unbounded")

	t.Run("also run as a task of the client's", func(t *testing.T) {
		tm.spans.Reset()
		sample(t, true)
		require.Eventually(t, func() bool { // the task runs after its answer
			for _, s := range tm.spans.GetSpans() {
				if s.Name == "sampling/createMessage" {
					return true
				}
			}
			return false
		}, 30*time.Second, time.Millisecond)
		task := tm.span(t, "sampling/createMessage")
		assert.Equal(t, spanID, task.Parent.SpanID().String())
		assert.NotEmpty(t, attrs(task)["mcplug.task.id"])
	})
}

// script is a model that asks for the tools of calls, one per turn, then
// answers.
type script struct {
	calls []string
	turn  int
}

func (s *script) Generate(ctx context.Context, req *agent.Request, onText func(string)) (*agent.Response, error) {
	defer func() { s.turn++ }()
	if s.turn < len(s.calls) {
		return &agent.Response{Content: []agent.Block{{Type: agent.BlockToolUse, ID: fmt.Sprint("u", s.turn), Name: s.calls[s.turn],
			Input: json.RawMessage(`{"a": 17, "b": 25}`)}}}, nil
	}
	return &agent.Response{Content: []agent.Block{{Type: agent.BlockText, Text: "42"}}}, nil
}

func TestATraceRunsFromTheAgentThroughTheManagerToTheServer(t *testing.T) {
	tm := newTelemetry(t)
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Observer: tm.obs})
	defer m.Close()
	require.NoError(t, m.Add("calc", calc(nil, nil).Transport()))
	a := &agent.Agent{Model: &script{calls: []string{"mcp__calc__add"}}, Tools: []agent.ToolProvider{m}, Observer: tm.obs}
	answer, err := a.Chat(ctxTimeout(t), "17 + 25?")
	require.NoError(t, err)
	assert.Equal(t, "42", answer)

	chat := tm.span(t, "invoke_agent")
	tool := tm.span(t, "execute_tool mcp__calc__add")
	call := tm.span(t, "tools/call add")
	assert.Equal(t, chat.SpanContext.SpanID(), tool.Parent.SpanID(), "the tool call is the Chat's")
	assert.Equal(t, tool.SpanContext.SpanID(), call.Parent.SpanID(), "the MCP request is the tool call's")
	assert.Equal(t, chat.SpanContext.TraceID(), call.SpanContext.TraceID())
	assert.Equal(t, "calc", attrs(call)["mcplug.server.name"], "the Manager names the server")
	turns := 0
	for _, s := range tm.spans.GetSpans() {
		if s.Name == "chat" {
			turns++
			assert.Equal(t, chat.SpanContext.SpanID(), s.Parent.SpanID())
		}
	}
	assert.Equal(t, 2, turns, "a span per model turn")
	assert.Equal(t, "mcp__calc__add", attrs(tool)["gen_ai.tool.name"])

	t.Run("a tool the model made up is not a span name", func(t *testing.T) {
		tm.spans.Reset()
		made := "mcp__calc__" + strings.Repeat("x", 300)
		a := &agent.Agent{Model: &script{calls: []string{made}}, Tools: []agent.ToolProvider{m}, Observer: tm.obs}
		_, err := a.Chat(ctxTimeout(t), "call something")
		require.NoError(t, err)
		tool := tm.span(t, "execute_tool")
		assert.NotContains(t, attrs(tool), "gen_ai.tool.name")
		for _, s := range tm.spans.GetSpans() {
			assert.NotContains(t, s.Name, made)
		}
	})
	t.Run("a failed tool call is an error span", func(t *testing.T) {
		tm.spans.Reset()
		a := &agent.Agent{Model: &script{calls: []string{"mcp__calc__fail"}}, Tools: []agent.ToolProvider{m}, Observer: tm.obs}
		_, err := a.Chat(ctxTimeout(t), "break it")
		require.NoError(t, err)
		tool := tm.span(t, "execute_tool mcp__calc__fail")
		assert.Equal(t, codes.Error, tool.Status.Code)
		assert.Equal(t, "tool_error", attrs(tool)["error.type"])
	})
}

func TestTasksAndRoundsAreOperationsOfTheirOwn(t *testing.T) {
	tm := newTelemetry(t)
	polls := 0
	srv := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			var p struct {
				InputResponses json.RawMessage `json:"inputResponses"`
			}
			json.Unmarshal(m.Params, &p)
			if p.InputResponses == nil { // a round of input first
				s.Reply(m.ID, map[string]any{"resultType": "input_required", "inputRequests": map[string]any{"where": map[string]any{"method": "roots/list"}}})
				return
			}
			s.Reply(m.ID, map[string]any{"resultType": "task", "taskId": "job-1", "status": "working", "pollIntervalMs": 100})
		},
		"tasks/get": func(s *mcptest.Session, m *mcptest.Message) {
			polls++
			task := map[string]any{"resultType": "complete", "taskId": "job-1", "status": "working"}
			if polls > 1 {
				task["status"], task["result"] = "completed", map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
			}
			s.Reply(m.ID, task)
		},
	}}
	c, err := mcp.Connect(ctxTimeout(t), srv.Transport(), &mcp.Options{Observer: tm.obs, Roots: []mcp.Root{{URI: "file:///src"}}})
	require.NoError(t, err)
	defer c.Close()
	pctx, parent := tm.tp.Tracer("test").Start(ctxTimeout(t), "the caller")
	res, err := c.CallTool(pctx, "job", nil)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text())
	parent.End()
	var calls, gets int
	for _, s := range tm.spans.GetSpans() {
		switch s.Name {
		case "tools/call job":
			calls++
		case "tasks/get":
			gets++
			assert.Equal(t, "job-1", attrs(s)["mcplug.task.id"])
		default:
			continue
		}
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID(), "%s: under the caller", s.Name)
	}
	assert.Equal(t, 2, calls, "the call and its round of input")
	assert.Equal(t, 2, gets, "each poll")
	names := []string{}
	for _, s := range tm.spans.GetSpans() {
		names = append(names, s.Name)
	}
	assert.True(t, slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "subscriptions/listen") }), "the listen for the task's status too: %q", names)
}

func TestATransportFailureIsAnErrorSpan(t *testing.T) {
	tm := newTelemetry(t)
	srv := calc(nil, nil)
	c, err := mcp.Connect(ctxTimeout(t), srv.Transport(), &mcp.Options{Observer: tm.obs})
	require.NoError(t, err)
	srv.InjectFault("tools/call", mcptest.Disconnect())
	_, err = c.CallTool(ctxTimeout(t), "add", map[string]any{"a": 1, "b": 2})
	require.ErrorIs(t, err, mcp.ErrClosed)
	<-c.Done()
	call := tm.span(t, "tools/call add")
	assert.Equal(t, codes.Error, call.Status.Code)
	assert.Equal(t, "connection_closed", attrs(call)["error.type"])
	sessions := tm.histogram(t, "mcp.client.session.duration")
	require.Len(t, sessions, 1, "the session ended with the server")
	v, lost := sessions[0].Attributes.Value("error.type")
	assert.True(t, lost, "a session the server ended is a failed one")
	assert.Equal(t, "connection_closed", v.AsString())
	c.Close()
}

func TestWhatAServerSuppliesIsBoundedInSpans(t *testing.T) {
	tm := newTelemetry(t)
	long := strings.Repeat("é", 3000) // 6,000 bytes
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"resources/read": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, map[string]any{"contents": []any{map[string]any{"uri": "https://docs.example/a", "text": "doc"}}})
		},
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) { s.ReplyError(m.ID, -32050, long) },
	}}
	c, err := mcp.Connect(ctxTimeout(t), srv.Transport(), &mcp.Options{Observer: tm.obs})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ReadResource(ctxTimeout(t), &mcp.ReadResourceParams{URI: "https://docs.example/a?token=s3cret"})
	require.NoError(t, err)
	_, err = c.CallTool(ctxTimeout(t), "loud", nil)
	require.Error(t, err)

	uri := attrs(tm.span(t, "resources/read"))["mcp.resource.uri"]
	assert.Contains(t, uri, "https://docs.example/a?token=")
	assert.NotContains(t, uri, "s3cret", "a query value can be a secret")
	desc := tm.span(t, "tools/call loud").Status.Description
	assert.LessOrEqual(t, len(desc), 1024+len("…"), "the server's message is cut")
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(desc, "…")), "cut on a character")
	assert.Equal(t, "-32050", attrs(tm.span(t, "tools/call loud"))["error.type"])
}

// A server chooses its error codes: the duration metric takes those of
// the JSON-RPC ranges as they are and every other as _OTHER, so that a
// server making up codes makes no new series; the span keeps the code.
func TestErrorCodesOutsideTheJSONRPCRangesAreOtherInMetrics(t *testing.T) {
	tm := newTelemetry(t)
	next := 0
	codes := []int{-32602, -32042, 1, 300, 301, 302, -1}
	srv := &mcptest.Server{Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.ReplyError(m.ID, codes[next], "no")
			next++
		},
	}}
	c, err := mcp.Connect(ctxTimeout(t), srv.Transport(), &mcp.Options{Observer: tm.obs})
	require.NoError(t, err)
	defer c.Close()
	for range codes {
		_, err := c.CallTool(ctxTimeout(t), "t", nil)
		require.Error(t, err)
	}
	seen := map[string]bool{}
	for _, p := range tm.histogram(t, "mcp.client.operation.duration") {
		if m, _ := p.Attributes.Value("mcp.method.name"); m.AsString() != "tools/call" {
			continue
		}
		if v, ok := p.Attributes.Value("error.type"); ok {
			seen[v.AsString()] = true
		}
	}
	assert.Equal(t, map[string]bool{"-32602": true, "-32042": true, "_OTHER": true}, seen, "error.type of the metric's series")
	var spanCodes []string
	for _, sp := range tm.spans.GetSpans() {
		if sp.Name == "tools/call t" {
			spanCodes = append(spanCodes, attrs(sp)["rpc.response.status_code"])
		}
	}
	assert.Equal(t, []string{"-32602", "-32042", "1", "300", "301", "302", "-1"}, spanCodes, "the spans keep the server's codes")
}

// A cancelled call is a notifications/cancelled operation only where the
// notification is sent: over Streamable HTTP of the 2026-07-28 revision
// the request's stream is closed instead, and nothing is recorded for it.
func TestACancellationIsRecordedOnlyWhereItIsSent(t *testing.T) {
	for _, era := range []struct {
		name     string
		versions []string
		sent     bool
	}{{"2025-11-25", nil, true}, {"2026-07-28", mcptest.Modern, false}} {
		t.Run(era.name, func(t *testing.T) {
			tm := newTelemetry(t)
			srv := &mcptest.Server{Versions: era.versions}
			started := make(chan struct{}, 1)
			srv.AddTool(mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcptest.Request) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				<-ctx.Done()
				return nil, ctx.Err()
			})
			ts := httptest.NewServer(srv)
			defer ts.Close()
			c, err := mcp.Connect(ctxTimeout(t), &mcp.StreamableHTTPTransport{URL: ts.URL}, &mcp.Options{Observer: tm.obs})
			require.NoError(t, err)
			defer c.Close()
			ctx, cancel := context.WithCancel(ctxTimeout(t))
			go func() { <-started; cancel() }()
			_, err = c.CallTool(ctx, "slow", nil)
			require.ErrorIs(t, err, context.Canceled)
			found := false
			for _, s := range tm.spans.GetSpans() {
				if s.Name == "notifications/cancelled" {
					found = true
				}
			}
			assert.Equal(t, era.sent, found)
		})
	}
}

// A healthy connection to a 2025-11-25 server records no failed
// operation: the era probe's server/discover is refused, as expected, and
// the ping that races it may be let go.
func TestTheEraProbeIsNotAFailure(t *testing.T) {
	for _, w := range []struct {
		name    string
		connect func(t *testing.T, srv *mcptest.Server) mcp.Transport
	}{
		{"over stdio", func(t *testing.T, srv *mcptest.Server) mcp.Transport {
			return &mcp.CommandTransport{Command: mcptest.Command("calc")}
		}},
		{"over HTTP", func(t *testing.T, srv *mcptest.Server) mcp.Transport {
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			return &mcp.StreamableHTTPTransport{URL: ts.URL}
		}},
		{"in memory", func(t *testing.T, srv *mcptest.Server) mcp.Transport { return srv.Transport() }},
	} {
		t.Run(w.name, func(t *testing.T) {
			tm := newTelemetry(t)
			c, err := mcp.Connect(ctxTimeout(t), w.connect(t, calc(nil, nil)), &mcp.Options{Observer: tm.obs})
			require.NoError(t, err)
			_, err = c.CallTool(ctxTimeout(t), "add", map[string]any{"a": 1, "b": 2})
			require.NoError(t, err)
			require.NoError(t, c.Close())
			discover := tm.span(t, "server/discover")
			assert.Equal(t, codes.Unset, discover.Status.Code)
			assert.Equal(t, "true", attrs(discover)["mcplug.era_probe"])
			for _, s := range tm.spans.GetSpans() {
				assert.NotEqual(t, codes.Error, s.Status.Code, "%s failed: %s", s.Name, s.Status.Description)
			}
			for _, p := range tm.histogram(t, "mcp.client.operation.duration") {
				_, failed := p.Attributes.Value("error.type")
				m, _ := p.Attributes.Value("mcp.method.name")
				assert.False(t, failed, "%s is measured as failed", m.AsString())
			}
		})
	}
}

// A server's request that carries its own trace is a child of it, and
// links the context it arrived in.
func TestAServedRequestLinksTheContextItArrivedIn(t *testing.T) {
	tm := newTelemetry(t)
	ambientCtx, ambient := tm.tp.Tracer("test").Start(context.Background(), "the stream")
	meta := map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	_, end := tm.obs.StartHandler(ambientCtx, &mcp.Operation{Method: "roots/list"}, meta)
	end(mcp.Outcome{})
	ambient.End()
	served := tm.span(t, "roots/list")
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", served.SpanContext.TraceID().String(), "the request's trace")
	require.Len(t, served.Links, 1)
	assert.Equal(t, ambient.SpanContext().SpanID(), served.Links[0].SpanContext.SpanID())

	t.Run("without a trace of its own, it is the context's child", func(t *testing.T) {
		tm.spans.Reset()
		_, end := tm.obs.StartHandler(ambientCtx, &mcp.Operation{Method: "roots/list"}, nil)
		end(mcp.Outcome{})
		served := tm.span(t, "roots/list")
		assert.Equal(t, ambient.SpanContext().SpanID(), served.Parent.SpanID())
		assert.Empty(t, served.Links)
	})
}
