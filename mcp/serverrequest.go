package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// request is a request or notification of the server's, read once from
// its line.
type request struct {
	Method string
	ID     json.RawMessage // as the server wrote it, echoed in the reply; nil for a notification
	Params json.RawMessage // nil when absent
	key    string          // the id, one spelling per id (a string quoted, a number in decimal)
}

// notif reports whether the message is a notification: no id, or a null
// one.
func (r *request) notif() bool { return r.ID == nil }

// peerID is the id as an Operation says it: a string's text, a number's
// digits.
func (r *request) peerID() string {
	if s, err := strconv.Unquote(r.key); err == nil {
		return peerRequestID(s)
	}
	return peerRequestID(r.key)
}

var errNoMethod = errors.New("no method")

// Bounds on a server message's method and id, as written: real ones are
// a few dozen bytes, and both are kept (the id as a map key until the
// request is answered, the method in replies and logs).
const (
	maxMethodBytes = 256
	maxIDBytes     = 256
)

// readRequest makes a request of the members of a message that is not a
// response (see ndjson.ScanTop). The method must be a string and the id,
// when there is one, a string or an integer. The params are copied unless
// owned (the line outlives the next read).
func readRequest(top ndjson.Top, owned bool) (*request, error) {
	if top.Method == nil {
		return nil, errNoMethod
	}
	if len(top.Method) > maxMethodBytes {
		return nil, fmt.Errorf("a method of %d bytes (at most %d)", len(top.Method), maxMethodBytes)
	}
	req := new(request)
	if err := json.Unmarshal(top.Method, &req.Method); err != nil {
		return nil, errors.New("the method is not a string")
	}
	if top.ID != nil && string(top.ID) != "null" {
		key, err := idKey(top.ID)
		if err != nil {
			return nil, err
		}
		req.ID, req.key = bytes.Clone(top.ID), key
	}
	if top.Params != nil {
		req.Params = top.Params
		if !owned {
			req.Params = bytes.Clone(top.Params)
		}
	}
	return req, nil
}

// idKey spells a request id one way, whatever its escapes or digits: a
// string quoted as strconv.Quote does, an integer in decimal. Other ids,
// and ids longer than maxIDBytes as written, are refused.
func idKey(raw []byte) (string, error) {
	if len(raw) > maxIDBytes {
		return "", fmt.Errorf("an id of %d bytes (at most %d)", len(raw), maxIDBytes)
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errors.New("the id is not a valid string")
		}
		return strconv.Quote(s), nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", errors.New("the id is neither a string nor an integer")
	}
	return strconv.FormatInt(n, 10), nil
}

// peerRequestID is a server request's id as an Operation says it, cut at
// maxPeerID bytes.
func peerRequestID(id string) string {
	if len(id) > maxPeerID {
		return strings.ToValidUTF8(id[:maxPeerID], "")
	}
	return id
}

// maxPeerID bounds a server request's id, in Operation.RequestID (the
// trace context it hands an Observer is bounded by jsonrpc.StringMeta).
const maxPeerID = 128
