package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// The other direction (2025-11-25): a server may ask the client to run
// its sampling or elicitation request as a task (a "task" member in the
// params), when the client offers tasks.requests.sampling.createMessage or
// tasks.requests.elicitation.create, which it does when the handler is
// set. The client answers at once with the task, runs the handler in the
// background, and serves the server's tasks/get, tasks/result, tasks/list
// and tasks/cancel for it.

// servedTaskTTL is how long a task run for the server is kept after its
// creation, unless the server asked for less; maxServedTaskTTL bounds what
// it may ask for.
const (
	servedTaskTTL    = 5 * time.Minute
	maxServedTaskTTL = time.Hour
)

// servedPollInterval is the polling interval suggested to the server.
const servedPollInterval = 500 * time.Millisecond

// taskStore keeps the tasks run for the server.
type taskStore struct {
	mu    sync.Mutex
	byID  map[string]*servedTask
	order []string // by creation, for tasks/list
	next  uint64
}

type servedTask struct {
	id      string
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc
	done    chan struct{} // closed at a terminal status
	mu      sync.Mutex
	status  TaskStatus
	message string
	updated time.Time
	result  any
	err     *Error
}

func (t *servedTask) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
		"ttl":           t.ttl.Milliseconds(),
		"pollInterval":  servedPollInterval.Milliseconds(),
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	return w
}

func (t *servedTask) finish(status TaskStatus, result any, err *Error, message string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.Terminal() {
		return false
	}
	t.status, t.result, t.err, t.message, t.updated = status, result, err, message, time.Now()
	close(t.done)
	return true
}

// purge drops the tasks whose TTL has passed; s.mu is held.
func (s *taskStore) purge(now time.Time) {
	s.order = slices.DeleteFunc(s.order, func(id string) bool {
		t := s.byID[id]
		if now.Sub(t.created) < t.ttl {
			return false
		}
		t.cancel()
		delete(s.byID, id)
		return true
	})
}

func (s *taskStore) get(id string) *servedTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(time.Now())
	return s.byID[id]
}

// taskMember returns the "task" member of a request's params, or nil.
func taskMember(params json.RawMessage) *taskRequest {
	var p struct {
		Augmentation *taskRequest `json:"task"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Augmentation
}

func (t *servedTask) statusNow() TaskStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// servedPage is the size of a tasks/list page.
const servedPage = 50

func (s *taskStore) list(cursor string) (any, *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purge(time.Now())
	start := 0
	if cursor != "" {
		i := slices.Index(s.order, cursor)
		if i < 0 {
			return nil, &Error{Code: CodeInvalidParams, Message: "unknown cursor"}
		}
		start = i
	}
	end := min(start+servedPage, len(s.order))
	tasks := []any{}
	for _, id := range s.order[start:end] {
		tasks = append(tasks, s.byID[id].wire())
	}
	res := map[string]any{"tasks": tasks}
	if end < len(s.order) {
		res["nextCursor"] = s.order[end]
	}
	return res, nil
}

// withRelatedTask adds _meta io.modelcontextprotocol/related-task to a
// result, as the answer to tasks/result carries it.
func withRelatedTask(result any, id string) (json.RawMessage, error) {
	return withMeta(result, map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": id}})
}
