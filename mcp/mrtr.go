package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mcplug/mcplug/internal/ndjson"
)

// Multi round-trip requests (2026-07-28): a modern server that needs input
// (a sampling, an elicitation, the roots) answers a request with an
// InputRequiredResult instead of sending requests of its own. The
// Connection answers the input requests with the same Options handlers
// that serve a legacy server's requests, and sends the request again with
// the answers (inputResponses) and the server's requestState, as a new
// request, until the result is complete.

// maxInputRounds bounds how often one request is sent again with input.
const maxInputRounds = 8

// ErrInputRounds is matched by the error of a request whose server kept
// asking for input past maxInputRounds (8) rounds.
var ErrInputRounds = errors.New("mcp: the server kept asking for input (too many rounds)")

// inputRequired is an InputRequiredResult.
type inputRequired struct {
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  *string                 `json:"requestState"`
}

type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// streamBroken reports whether err is a *StreamBrokenError.
func streamBroken(err error) bool {
	var broken *StreamBrokenError
	return errors.As(err, &broken)
}

// inputRequiredType is the resultType of an InputRequiredResult, as it
// stands in a result.
var inputRequiredType = []byte(`"input_required"`)

// isInputRequired reports whether a result's resultType is
// "input_required" (absent means "complete"). It looks at the top-level
// members only and allocates nothing.
func isInputRequired(raw []byte) bool {
	found := false
	ndjson.Members(raw, func(key, v []byte) bool {
		if string(key) == "resultType" {
			found = bytes.Equal(v, inputRequiredType)
			return false
		}
		return true
	})
	return found
}

// roundTrip sends a request and returns its raw, complete result: on a
// modern server, an InputRequiredResult is answered and the request sent
// again, at most maxInputRounds times. Each round is a new request, bounded
// by ctx like the first.
func (c *Connection) roundTrip(ctx context.Context, method string, params any) ([]byte, error) {
	raw, err := c.roundTripOnce(ctx, method, params)
	if err != nil && c.meta.Load() != nil && ctx.Err() == nil && streamBroken(err) {
		raw, err = c.roundTripOnce(ctx, method, params) // a new request, as the spec asks
	}
	if err == nil || c.meta.Load() == nil {
		// the common case: nothing to retry
	} else if supported, ok := unsupportedVersion(err); ok && ctx.Err() == nil && method != "server/discover" {
		// The server refused the version agreed on (a server that answers
		// server/discover but serves the rest in another era): agree on
		// another, once, and send the request again.
		if rerr := c.renegotiate(ctx, supported); rerr != nil {
			return nil, rerr
		}
		raw, err = c.roundTripOnce(ctx, method, params)
	}
	for round := 0; err == nil && c.meta.Load() != nil && isInputRequired(raw); round++ {
		if round == maxInputRounds {
			return nil, wrap(method, ErrInputRounds)
		}
		var ir inputRequired
		if err := json.Unmarshal(raw, &ir); err != nil {
			return nil, wrap(method, &badResult{err})
		}
		if len(ir.InputRequests) > c.maxServerRequests() {
			return nil, wrap(method, fmt.Errorf("the server asks for %d inputs at once, more than %d", len(ir.InputRequests), c.maxServerRequests()))
		}
		responses, ierr := c.answerInputs(ctx, ir.InputRequests)
		if ierr != nil {
			return nil, wrap(method, ierr)
		}
		if params, ierr = withInput(params, responses, ir.RequestState); ierr != nil {
			return nil, wrap(method, ierr)
		}
		raw, err = c.roundTripOnce(ctx, method, params) // the loop's err: a failed retry ends it with its error
	}
	return raw, err
}

// answerInputs runs the handler of each input request, one after the
// other, in the order of their keys. A request the client does not serve,
// or whose handler fails, fails the whole request: the spec has no way to
// answer one input with an error. A declined or cancelled elicitation is an
// answer like any other.
func (c *Connection) answerInputs(ctx context.Context, reqs map[string]inputRequest) (map[string]any, error) {
	out := make(map[string]any, len(reqs))
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		r := reqs[key]
		if len(r.Params) > c.maxServerRequestSize() {
			return nil, fmt.Errorf("input request %q: %d bytes, more than this client takes (%d)", key, len(r.Params), c.maxServerRequestSize())
		}
		var res any
		var rpcErr *Error
		switch r.Method {
		case "sampling/createMessage":
			res, rpcErr = c.sample(ctx, r.Params)
		case "elicitation/create":
			if c.opts.ElicitForm == nil && c.opts.ElicitURL == nil {
				rpcErr = &Error{Code: CodeMethodNotFound, Message: "this client does not offer elicitation"}
			} else {
				res, rpcErr = c.elicit(ctx, r.Params)
			}
		case "roots/list":
			if c.opts.Roots == nil {
				rpcErr = &Error{Code: CodeMethodNotFound, Message: "this client does not offer roots"}
			} else {
				res = c.listRoots()
			}
		default:
			rpcErr = &Error{Code: CodeMethodNotFound, Message: "unknown input request method " + r.Method}
		}
		if rpcErr != nil {
			return nil, &InputError{Key: key, Method: r.Method, Err: rpcErr}
		}
		out[key] = res
	}
	return out, nil
}

// InputError reports an input request of a modern server (sampling,
// elicitation, roots) that the client could not answer: it has no handler
// for it, or the handler failed. The request that asked for the input
// fails with it.
type InputError struct {
	Key    string // the server's name for the input request
	Method string
	Err    *Error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("mcp: could not answer the server's %s (input %q): %s", e.Method, e.Key, e.Err.Message)
}

func (e *InputError) Unwrap() error { return e.Err }

// withInput returns params with inputResponses and, when the server gave
// one, its requestState as it was (replacing those of an earlier round).
func withInput(params any, responses map[string]any, state *string) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if params != nil {
		b, err := appendParams(nil, params)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
			return nil, errors.New("params must be a JSON object")
		}
	}
	delete(fields, "requestState")
	r, err := json.Marshal(responses)
	if err != nil {
		return nil, err
	}
	fields["inputResponses"] = r
	if state != nil {
		s, _ := json.Marshal(*state)
		fields["requestState"] = s
	}
	return json.Marshal(fields)
}
