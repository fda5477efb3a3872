package mcp

import (
	"io"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// NewStreamWithMaxMessage is NewStream with another bound on one message,
// as CommandTransport.MaxMessageSize sets it.
func NewStreamWithMaxMessage(rwc io.ReadWriteCloser, max int) Stream {
	return newLineStreamWith(rwc, ndjson.StreamOptions{MaxMessageSize: max})
}
