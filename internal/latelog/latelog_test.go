package latelog

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestALateLoggerLogsThroughTheLoggerNamedLater(t *testing.T) {
	text := func(b *bytes.Buffer) *slog.Logger {
		return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
	}
	var first, second bytes.Buffer
	logger, late := New()
	derived := logger.With("server", "calc").WithGroup("g") // made before any target is named

	late.Use(text(&first))
	derived.Info("one", "k", 1)
	logger.Debug("below the target's level")
	late.Use(nil) // no change
	logger.Warn("two")
	late.Use(text(&second))
	derived.Info("three", "k", 3)

	assert.Equal(t, "level=INFO msg=one server=calc g.k=1\nlevel=WARN msg=two\n", first.String())
	assert.Equal(t, "level=INFO msg=three server=calc g.k=3\n", second.String(), "a derived logger follows a new target")
}
