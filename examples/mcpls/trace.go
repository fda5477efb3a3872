package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// spanPrinter is an OpenTelemetry TracerProvider that prints each span as
// it ends, one line each (-trace): what otelmcp records, without an SDK.
// A child ends, and is printed, before its parent.
type spanPrinter struct {
	embedded.TracerProvider
	mu  sync.Mutex
	out io.Writer
}

func (p *spanPrinter) Tracer(string, ...trace.TracerOption) trace.Tracer { return &spanTracer{p: p} }

type spanTracer struct {
	embedded.Tracer
	p *spanPrinter
}

func (t *spanTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	parent := trace.SpanContextFromContext(ctx)
	var sc trace.SpanContextConfig
	if parent.IsValid() {
		sc.TraceID = parent.TraceID()
	} else {
		rand.Read(sc.TraceID[:])
	}
	rand.Read(sc.SpanID[:])
	sc.TraceFlags = trace.FlagsSampled
	s := &printedSpan{p: t.p, name: name, kind: cfg.SpanKind(), start: time.Now(), parent: parent,
		sc: trace.NewSpanContext(sc), attrs: cfg.Attributes()}
	return trace.ContextWithSpan(ctx, s), s
}

type printedSpan struct {
	embedded.Span
	p      *spanPrinter
	name   string
	kind   trace.SpanKind
	start  time.Time
	parent trace.SpanContext
	sc     trace.SpanContext

	mu     sync.Mutex
	attrs  []attribute.KeyValue
	status string
	ended  bool
}

func (s *printedSpan) End(...trace.SpanEndOption) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	var b strings.Builder
	fmt.Fprintf(&b, "span %s %s %v trace=%s span=%s", safe(s.name), s.kind, time.Since(s.start).Round(time.Microsecond),
		s.sc.TraceID().String()[:8], s.sc.SpanID().String()[:8])
	if s.parent.IsValid() {
		fmt.Fprintf(&b, " parent=%s", s.parent.SpanID().String()[:8])
	}
	for _, kv := range s.attrs {
		fmt.Fprintf(&b, " %s=%s", kv.Key, safe(kv.Value.String()))
	}
	if s.status != "" {
		fmt.Fprintf(&b, " error=%q", safe(s.status))
	}
	s.mu.Unlock()
	s.p.mu.Lock()
	fmt.Fprintln(s.p.out, b.String())
	s.p.mu.Unlock()
}

func (s *printedSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	s.attrs = append(s.attrs, kv...)
	s.mu.Unlock()
}

func (s *printedSpan) SetStatus(code codes.Code, description string) {
	if code != codes.Error {
		return
	}
	s.mu.Lock()
	s.status = description
	if s.status == "" {
		s.status = "error"
	}
	s.mu.Unlock()
}

func (s *printedSpan) SetName(name string) {
	s.mu.Lock()
	s.name = name
	s.mu.Unlock()
}

func (s *printedSpan) SpanContext() trace.SpanContext          { return s.sc }
func (s *printedSpan) IsRecording() bool                       { return true }
func (s *printedSpan) AddEvent(string, ...trace.EventOption)   {}
func (s *printedSpan) AddLink(trace.Link)                      {}
func (s *printedSpan) RecordError(error, ...trace.EventOption) {}
func (s *printedSpan) TracerProvider() trace.TracerProvider    { return s.p }
