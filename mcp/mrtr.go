package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mcplug/mcplug/internal/httpstream"
	"github.com/mcplug/mcplug/internal/jsonrpc"
)

// Multi round-trip requests (2026-07-28): a modern server that needs input
// (a sampling, an elicitation, the roots) answers a request with an
// InputRequiredResult instead of sending requests of its own. The
// Connection answers the input requests with the same Options handlers
// that serve a legacy server's requests, and sends the request again with
// the answers (inputResponses) and the server's requestState, as a new
// request, until the result is complete.

// Bounds of what the input one call asks for may cost, counted over the
// whole call: the rounds of its multi round-trip requests and of its
// task's input (each tasks/update), and the answers (handler calls) of
// both, a 2025-11-25 task's requests for input included.
const (
	maxInputRounds  = 8
	maxInputAnswers = 64
)

// spend takes rounds and answers from b, or fails with ErrInputRounds
// (taking nothing).
func (b *inputBudget) spend(rounds, answers int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.rounds+rounds > maxInputRounds:
		return fmt.Errorf("%w: more than %d rounds", ErrInputRounds, maxInputRounds)
	case b.answers+answers > maxInputAnswers:
		return fmt.Errorf("%w: more than %d answers", ErrInputRounds, maxInputAnswers)
	}
	b.rounds += rounds
	b.answers += answers
	return nil
}

// inputRequired is an InputRequiredResult.
type inputRequired struct {
	InputRequests map[string]InputRequest `json:"inputRequests"`
	RequestState  *string                 `json:"requestState"`
}

// InputRequest is a request of a modern server for input (2026-07-28):
// in an InputRequiredResult, or in a task waiting for input
// (Task.InputRequests). Method is "sampling/createMessage",
// "elicitation/create" or "roots/list"; Params are that request's params,
// as the server sent them. The answer is the method's result (for
// example an *ElicitResult), sent by key (Connection.UpdateTask for a
// task).
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// streamBroken reports whether err is a modern server's response stream
// that broke before the response (httpstream.StreamBrokenError).
func streamBroken(err error) bool {
	var broken *httpstream.StreamBrokenError
	return errors.As(err, &broken)
}

// inputRequiredType is the resultType of an InputRequiredResult, as it
// stands in a result.
var inputRequiredType = []byte(`"input_required"`)

// isInputRequired reports whether a result's resultType is
// "input_required" (absent means "complete").
func isInputRequired(raw []byte) bool { return memberIs(raw, "resultType", inputRequiredType) }

// roundTripWith is roundTrip whose input rounds spend *budget, made when
// the server first asks for input if *budget is nil: the budget of one
// call, shared with its task.
func (c *Connection) roundTripWith(ctx context.Context, method string, params any, budget **inputBudget) ([]byte, error) {
	raw, b, err := c.era().roundTrip(ctx, c, method, params, *budget)
	*budget = b
	return raw, err
}

// answerInputs runs the handlers of the input requests at once (as many
// at a time as Options.MaxServerRequests allows), and returns their
// answers by key once every handler has returned. A request
// the client does not serve, or whose handler fails, fails the whole
// request (the spec has no way to answer one input with an error): the
// first to fail ends the others' ctx, and its error is returned. A
// declined or cancelled elicitation is an answer like any other.
func (c *Connection) answerInputs(ctx context.Context, reqs map[string]InputRequest) (map[string]any, error) {
	keys := slices.Sorted(maps.Keys(reqs))
	out := make(map[string]any, len(reqs))
	if len(keys) == 1 {
		res, err := c.answerInput(ctx, keys[0], reqs[keys[0]])
		if err != nil {
			return nil, err
		}
		out[keys[0]] = res
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := make([]any, len(keys))
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	// At most as many handlers at once as the server may have requests
	// served (Options.MaxServerRequests).
	slots := make(chan struct{}, c.maxServerRequests())
	for i, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				once.Do(func() { first = ctx.Err() })
				return
			}
			res, err := c.answerInput(ctx, key, reqs[key])
			if err != nil {
				once.Do(func() { first = err; cancel() })
				return
			}
			answers[i] = res
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	for i, key := range keys {
		out[key] = answers[i]
	}
	return out, nil
}

// answerInput runs the handler of one input request.
func (c *Connection) answerInput(ctx context.Context, key string, r InputRequest) (any, error) {
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
	return res, nil
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
		b, err := jsonrpc.AppendParams(nil, params)
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
