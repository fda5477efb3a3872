package mcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// A long-running tool whose server answers with a task: CallTool follows
// the task and returns the tool's result, as for any call; StartToolTask
// hands the task to the program instead.
func ExampleConnection_StartToolTask() {
	polls := 0
	server := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, map[string]any{"resultType": "task", "taskId": "build-1", "status": "working", "statusMessage": "compiling", "pollIntervalMs": 100})
		},
		"tasks/get": func(s *mcptest.Session, m *mcptest.Message) {
			polls++
			task := map[string]any{"resultType": "complete", "taskId": "build-1", "status": "working", "statusMessage": "linking", "pollIntervalMs": 100}
			if polls%2 == 0 {
				task["status"], task["statusMessage"] = "completed", "done"
				task["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "build ok"}}}
			}
			s.Reply(m.ID, task)
		},
	}}
	ctx := context.Background()
	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// Transparent: status messages reach the call's progress callback.
	pctx := mcp.WithCallOptions(ctx, mcp.CallOptions{Progress: func(p mcp.Progress) { fmt.Println("status:", p.Message) }})
	res, err := c.CallTool(pctx, "build", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())

	// Explicit: the program holds the task and waits when it likes.
	task, err := c.StartToolTask(ctx, "build", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.ID, task.Status)
	res, err = task.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// status: compiling
	// status: linking
	// status: done
	// build ok
	// build-1 working
	// build ok
}
