package oteltest

import (
	"context"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
	"github.com/mcplug/mcplug/mcp/otelmcp"
)

// discard is a span exporter that drops what it gets.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkCallTool calls the add tool over stdio, without an Observer
// and with otelmcp on the SDK (every span sampled and exported, to
// nowhere; the metrics aggregated).
func BenchmarkCallTool(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "traced"}[traced]
		b.Run(name, func(b *testing.B) {
			opts := &mcp.Options{Logger: slog.New(slog.DiscardHandler)}
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(discard{}))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				b.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
				opts.Observer = otelmcp.New(&otelmcp.Options{TracerProvider: tp, MeterProvider: mp, Propagator: propagation.TraceContext{}})
			}
			ctx := context.Background()
			c, err := mcp.Connect(ctx, &mcp.CommandTransport{Command: mcptest.Command("calc")}, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			args := map[string]any{"a": 17, "b": 25}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.CallTool(ctx, "add", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
