// Package otelmcp traces and measures MCP with OpenTelemetry, as
// OpenTelemetry's semantic conventions for MCP describe it (Development
// status): a client span per request and notification a Connection sends,
// named "{mcp.method.name} {target}" ("tools/call add"), a server span per
// request of the server's it serves, the metrics
// mcp.client.operation.duration, mcp.client.session.duration and
// mcp.server.operation.duration (the server's requests it serves:
// sampling, elicitation, roots), and the
// trace context carried in params._meta (traceparent, tracestate, baggage)
// both ways. Its Observer also traces an agent.Agent: a span per Chat
// (invoke_agent), per model turn (chat) and per tool call
// (execute_tool {name}; plain execute_tool for a tool the agent does not
// have), so a trace runs from the agent's turn through the
// tool call to the server.
//
// It uses the OpenTelemetry API only: the program brings the SDK and its
// exporters, and sets them globally or in Options.
//
//	obs := otelmcp.New(nil) // the global TracerProvider, MeterProvider and propagator
//	m := mcp.NewManager(cfg, &mcp.ManagerOptions{Observer: obs})
//	a := &agent.Agent{Model: model, Tools: []agent.ToolProvider{m}, Observer: obs}
//
// Attributes: mcp.method.name, jsonrpc.request.id, gen_ai.tool.name and
// gen_ai.operation.name (execute_tool) for tools/call, gen_ai.prompt.name,
// mcp.resource.uri (query values redacted), mcp.protocol.version, mcp.session.id,
// network.transport (pipe for stdio, tcp for HTTP), network.protocol.name
// and network.protocol.version (http, and the version of the server's
// last response) over HTTP, server.address,
// server.port, and mcplug.server.name (a Manager's name of the server) and
// mcplug.task.id where they apply. A failed operation has error.type (the
// JSON-RPC error code, tool_error for a result with isError, timeout,
// cancelled, connection_closed, or the Go error's type) and an error status
// (the message, cut at 1 KiB); a JSON-RPC error's code is
// rpc.response.status_code too. The era probe's expected answers (a
// 2025-11-25 server's method not found to server/discover, a probe let go
// once the era is known) are no failure: such a span has mcplug.era_probe
// and no error. The metrics leave out
// what is unbounded (ids, URIs).
package otelmcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/internal/redact"
	"github.com/mcplug/mcplug/mcp"
)

// instrumentation names the tracer and meter.
const instrumentation = "github.com/mcplug/mcplug/mcp/otelmcp"

// Options configure an Observer. A nil *Options, and every zero field,
// means the global one of package otel.
type Options struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
}

// Observer traces and measures what it observes; it is an mcp.Observer
// and an agent.Observer, safe for concurrent use.
type Observer struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	ops      metric.Float64Histogram
	sessions metric.Float64Histogram
	served   metric.Float64Histogram // the requests of the server's the client serves
}

var (
	_ mcp.Observer   = (*Observer)(nil)
	_ agent.Observer = (*Observer)(nil)
)

// durationBuckets are the conventions' advice for MCP durations, in
// seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// New returns an Observer on the providers and propagator of opts.
func New(opts *Options) *Observer {
	if opts == nil {
		opts = &Options{}
	}
	tp, mp, prop := opts.TracerProvider, opts.MeterProvider, opts.Propagator
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	meter := mp.Meter(instrumentation)
	// A meter that cannot make an instrument gives a no-op one with the
	// error, which is the SDK's to report (otel.Handle): the traces go on.
	ops, _ := meter.Float64Histogram("mcp.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	sessions, _ := meter.Float64Histogram("mcp.client.session.duration", metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP session as observed on the MCP client."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	served, _ := meter.Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	return &Observer{tracer: tp.Tracer(instrumentation), prop: prop, ops: ops, sessions: sessions, served: served}
}

// StartOperation starts the client span of a request or notification and
// returns the trace context to carry in its _meta.
func (o *Observer) StartOperation(ctx context.Context, op *mcp.Operation) (context.Context, map[string]string, func(mcp.Outcome)) {
	start := time.Now()
	all := metricAttributes(op)
	n := len(all) // the metric's are the first n
	all = appendSpanOnly(all, op)
	ctx, span := o.tracer.Start(ctx, spanName(op), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(all...))
	carrier := propagation.MapCarrier{}
	o.prop.Inject(ctx, carrier)
	return ctx, carrier, func(out mcp.Outcome) {
		if op.Probe && expected(out.Err) {
			// The era probe's refusal, or a probe let go: the answer the
			// probe looks for, not a failure.
			span.SetAttributes(attribute.Bool("mcplug.era_probe", true))
			span.End()
			o.ops.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(all[:n:n]...))
			return
		}
		attrs := append(all[:n:n], fail(span, out)...)
		span.End()
		o.ops.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}
}

// StartHandler starts the server span of a request of the server's, under
// the trace context the request carried; the span of ctx, when it has
// one and the request carried another, is linked.
func (o *Observer) StartHandler(ctx context.Context, op *mcp.Operation, meta map[string]string) (context.Context, func(mcp.Outcome)) {
	var links []trace.Link
	if len(meta) > 0 {
		ambient := trace.SpanContextFromContext(ctx)
		ctx = o.prop.Extract(ctx, propagation.MapCarrier(meta))
		// The request's own trace is the parent; the context it arrived in
		// (an HTTP request's span, say) is linked, as the conventions ask.
		if remote := trace.SpanContextFromContext(ctx); ambient.IsValid() && !ambient.Equal(remote) {
			links = append(links, trace.Link{SpanContext: ambient})
		}
	}
	start := time.Now()
	all := metricAttributes(op)
	n := len(all)
	all = appendSpanOnly(all, op)
	ctx, span := o.tracer.Start(ctx, spanName(op), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(all...), trace.WithLinks(links...))
	return ctx, func(out mcp.Outcome) {
		attrs := append(all[:n:n], fail(span, out)...)
		span.End()
		o.served.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}
}

// StartSession measures the session, from the handshake to its end.
func (o *Observer) StartSession(op *mcp.Operation) func(error) {
	start := time.Now()
	attrs := metricAttributes(op)
	return func(err error) {
		if errType, _, _ := failure(mcp.Outcome{Err: err}); errType != "" {
			attrs = append(attrs, attribute.String("error.type", errType))
		}
		o.sessions.Record(context.Background(), time.Since(start).Seconds(), metric.WithAttributes(attrs...))
	}
}

// StartChat starts the span of an agent's Chat.
func (o *Observer) StartChat(ctx context.Context) (context.Context, func(error)) {
	ctx, span := o.tracer.Start(ctx, "invoke_agent", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "invoke_agent")))
	return ctx, func(err error) { fail(span, mcp.Outcome{Err: err}); span.End() }
}

// StartTurn starts the span of one model request of a Chat.
func (o *Observer) StartTurn(ctx context.Context, step int) (context.Context, func(error)) {
	ctx, span := o.tracer.Start(ctx, "chat", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.Int("mcplug.agent.step", step)))
	return ctx, func(err error) { fail(span, mcp.Outcome{Err: err}); span.End() }
}

// StartToolCall starts the span of a tool call the model asked for; the
// MCP tools/call under it is its child.
//
// A call of a tool the agent does not have (name "") is "execute_tool",
// without gen_ai.tool.name.
func (o *Observer) StartToolCall(ctx context.Context, name string) (context.Context, func(bool, error)) {
	spanName, attrs := "execute_tool", []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool")}
	if name != "" {
		spanName, attrs = spanName+" "+name, append(attrs, attribute.String("gen_ai.tool.name", name))
	}
	ctx, span := o.tracer.Start(ctx, spanName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(isError bool, err error) {
		fail(span, mcp.Outcome{Err: err, ToolError: isError})
		span.End()
	}
}

// expected reports whether err is what a probe expects of some servers:
// method not found, or the probe let go (its ctx cancelled).
func expected(err error) bool {
	var rpcErr *mcp.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == mcp.CodeMethodNotFound || errors.Is(err, context.Canceled)
}

// maxDescription bounds a span's status description: a server's error
// message can be as long as a message may be.
const maxDescription = 1024

// fail marks span failed when out is a failure (error.type,
// rpc.response.status_code, an error status) and returns the attributes
// it set, for the metric.
func fail(span trace.Span, out mcp.Outcome) []attribute.KeyValue {
	errType, code, msg := failure(out)
	if errType == "" {
		return nil
	}
	attrs := []attribute.KeyValue{attribute.String("error.type", errType)}
	if code != "" {
		attrs = append(attrs, attribute.String("rpc.response.status_code", code))
	}
	if len(msg) > maxDescription {
		msg = strings.ToValidUTF8(msg[:maxDescription], "") + "…"
	}
	span.SetAttributes(attrs...)
	span.SetStatus(codes.Error, msg)
	if code != "" && !jsonrpcCode(code) {
		// The span keeps the code the server sent; the metric's series must
		// not grow with every integer a server makes up.
		attrs = []attribute.KeyValue{attribute.String("error.type", otherCode), attribute.String("rpc.response.status_code", otherCode)}
	}
	return attrs
}

// otherCode stands, in metrics, for a JSON-RPC error code outside the
// ranges JSON-RPC reserves (-32768 to -32000), as the semantic
// conventions' _OTHER.
const otherCode = "_OTHER"

// jsonrpcCode reports whether the error code code is in the range the
// JSON-RPC spec reserves (its own errors, and the implementation-defined
// server errors, where MCP's are).
func jsonrpcCode(code string) bool {
	n, err := strconv.ParseInt(code, 10, 64)
	return err == nil && n >= -32768 && n <= -32000
}

// spanName is "{mcp.method.name} {target}", the target a tool or prompt.
func spanName(op *mcp.Operation) string {
	switch {
	case op.Tool != "":
		return op.Method + " " + op.Tool
	case op.Prompt != "":
		return op.Method + " " + op.Prompt
	}
	return op.Method
}

// appendSpanOnly appends the operation's attributes that a metric leaves
// out: ids and URIs, unbounded. A resource URI's query values are
// redacted.
func appendSpanOnly(attrs []attribute.KeyValue, op *mcp.Operation) []attribute.KeyValue {
	if op.RequestID != "" {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", op.RequestID))
	}
	if op.ResourceURI != "" {
		attrs = append(attrs, attribute.String("mcp.resource.uri", redact.URL(op.ResourceURI)))
	}
	if op.SessionID != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", op.SessionID))
	}
	if op.TaskID != "" {
		attrs = append(attrs, attribute.String("mcplug.task.id", op.TaskID))
	}
	return attrs
}

// metricAttributes are the operation's attributes of bounded cardinality.
func metricAttributes(op *mcp.Operation) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 16) // room for the span's own
	if op.Method != "" {
		attrs = append(attrs, attribute.String("mcp.method.name", op.Method))
	}
	if op.Tool != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.name", op.Tool), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	if op.Prompt != "" {
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", op.Prompt))
	}
	if op.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", op.ProtocolVersion))
	}
	if op.Transport != "" {
		attrs = append(attrs, attribute.String("network.transport", op.Transport))
	}
	if op.NetworkProtocol != "" {
		attrs = append(attrs, attribute.String("network.protocol.name", op.NetworkProtocol))
		if op.NetworkProtocolVersion != "" {
			attrs = append(attrs, attribute.String("network.protocol.version", op.NetworkProtocolVersion))
		}
	}
	if op.Address != "" {
		attrs = append(attrs, attribute.String("server.address", op.Address))
		if op.Port != 0 {
			attrs = append(attrs, attribute.Int("server.port", op.Port))
		}
	}
	if op.Server != "" {
		attrs = append(attrs, attribute.String("mcplug.server.name", op.Server))
	}
	return attrs
}

// failure classifies an outcome: error.type, the JSON-RPC code (as
// rpc.response.status_code), and the status description; "" for success.
func failure(out mcp.Outcome) (errType, code, msg string) {
	var rpcErr *mcp.Error
	switch err := out.Err; {
	case err == nil && out.ToolError:
		return "tool_error", "", "the tool's result is an error"
	case err == nil:
		return "", "", ""
	case errors.As(err, &rpcErr):
		c := strconv.FormatInt(rpcErr.Code, 10)
		return c, c, rpcErr.Message
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", "", err.Error()
	case errors.Is(err, mcp.ErrClosed):
		return "connection_closed", "", err.Error()
	case errors.Is(err, context.Canceled):
		return "cancelled", "", err.Error()
	default:
		return fmt.Sprintf("%T", err), "", err.Error()
	}
}
