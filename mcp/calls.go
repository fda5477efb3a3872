package mcp

import "sync"

// requestBufPool keeps the buffers requests are encoded into (see
// internal/jsonrpc for the encoding and the calls waiting for answers).
var requestBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}
