package oteltest

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"slices"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/otelmcp"
)

// lines is a span exporter that prints the name, kind and MCP attributes
// of each span of the tools on stdout (a real program uses an exporter of
// the SDK's: stdouttrace, OTLP).
type lines struct{}

func (lines) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "tools/") {
			continue // the handshake's, for one
		}
		var attrs []string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case "mcp.method.name", "gen_ai.tool.name", "mcplug.server.name", "error.type":
				attrs = append(attrs, fmt.Sprintf("%s=%s", kv.Key, kv.Value.String()))
			}
		}
		slices.Sort(attrs)
		fmt.Println(s.Name(), s.SpanKind(), strings.Join(attrs, " "))
	}
	return nil
}

func (lines) Shutdown(context.Context) error { return nil }

// Exporting the spans of a Manager's calls: the SDK's TracerProvider,
// installed globally with the W3C trace context propagator, and otelmcp's
// Observer on it.
func Example_stdout() {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(lines{}))
	defer tp.Shutdown(context.Background())
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	m := mcp.NewManager(nil, &mcp.ManagerOptions{Observer: otelmcp.New(nil), Logger: slog.New(slog.DiscardHandler)})
	if err := m.Add("calc", calc(nil, nil).Transport()); err != nil { // tools add and fail
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := m.CallTool(ctx, "mcp__calc__add", map[string]any{"a": 17, "b": 25})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("result:", res.Text())
	res, err = m.CallTool(ctx, "mcp__calc__fail", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("a tool error:", res.IsError)
	m.Close()
	// Output:
	// tools/list client mcp.method.name=tools/list mcplug.server.name=calc
	// tools/call add client gen_ai.tool.name=add mcp.method.name=tools/call mcplug.server.name=calc
	// result: 42
	// tools/call fail client error.type=tool_error gen_ai.tool.name=fail mcp.method.name=tools/call mcplug.server.name=calc
	// a tool error: true
}
