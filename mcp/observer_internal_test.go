package mcp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAServerRequestIDIsCutForAnObserver(t *testing.T) {
	assert.Len(t, peerRequestID(strings.Repeat("9", 1000)), maxPeerID)
	assert.Equal(t, "17", peerRequestID("17"))
}
