package mcp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAListingIsTakenAsFreshForAtMostAnHour(t *testing.T) {
	assert.Equal(t, 5*time.Minute, skillsTTL(5*time.Minute))
	assert.Equal(t, time.Hour, skillsTTL(240*time.Hour), "a server's ttlMs is clamped")
	assert.Equal(t, time.Duration(0), skillsTTL(0))
}
