// Package oteltest checks package otelmcp with the OpenTelemetry SDK: its
// in-memory span exporter and a manual metric reader. It is a module of
// its own, so that the SDK stays out of mcplug's dependencies; .ci/run
// runs it (cd internal/oteltest && go test ./...).
package oteltest
