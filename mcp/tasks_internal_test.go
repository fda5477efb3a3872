package mcp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTaskPollIntervalBounds(t *testing.T) {
	for given, want := range map[time.Duration]time.Duration{
		0:                defaultTaskPollInterval,
		time.Millisecond: minTaskPollInterval,
		2 * time.Second:  2 * time.Second,
		time.Hour:        maxTaskPollInterval,
		-time.Second:     minTaskPollInterval,
	} {
		assert.Equal(t, want, (&Task{PollInterval: given}).pollInterval(), "server says %v", given)
	}
}
