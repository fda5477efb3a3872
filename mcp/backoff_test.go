package mcp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackOff(t *testing.T) {
	tests := []struct {
		name     string
		sameCall bool
		last     time.Duration
		want     time.Duration
	}{
		{"a new call is looked at again after idle", false, 400 * time.Millisecond, time.Millisecond},
		{"the same call doubles the sleep", true, 8 * time.Millisecond, 16 * time.Millisecond},
		{"up to the bound", true, maxBackoff, maxBackoff},
		{"never zero, even after a reset", true, 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, backOff(tt.sameCall, tt.last, time.Millisecond))
		})
	}
}
