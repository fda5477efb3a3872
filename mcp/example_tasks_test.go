package mcp_test

import (
	"context"
	"encoding/json"
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

// The explicit path of a 2026-07-28 task: the program starts it, watches
// its status, answers its input itself with UpdateTask, and cancels it.
func ExampleConnection_UpdateTask() {
	status, message := "working", "queued"
	server := &mcptest.Server{Versions: mcptest.Modern, Handlers: map[string]mcptest.Handler{
		"tools/call": func(s *mcptest.Session, m *mcptest.Message) {
			s.Reply(m.ID, map[string]any{"resultType": "task", "taskId": "deploy-1", "status": status, "statusMessage": message})
			status, message = "input_required", "waiting for a go-ahead"
		},
		"tasks/get": func(s *mcptest.Session, m *mcptest.Message) {
			task := map[string]any{"resultType": "complete", "taskId": "deploy-1", "status": status, "statusMessage": message}
			if status == "input_required" {
				task["inputRequests"] = map[string]any{"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{
					"mode": "form", "message": "Deploy to production?",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}}
			}
			s.Reply(m.ID, task)
		},
		"tasks/update": func(s *mcptest.Session, m *mcptest.Message) {
			status, message = "working", "deploying"
			s.Reply(m.ID, map[string]any{"resultType": "complete"})
		},
		"tasks/cancel": func(s *mcptest.Session, m *mcptest.Message) {
			status, message = "cancelled", "stopped by the user"
			s.Reply(m.ID, map[string]any{"resultType": "complete"})
		},
	}}
	ctx := context.Background()
	c, err := mcp.Connect(ctx, server.Transport(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	task, err := c.StartToolTask(ctx, "deploy", map[string]any{"env": "production"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.ID, task.Status, task.StatusMessage)

	task, err = c.GetTask(ctx, task.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status, task.StatusMessage)
	for key, req := range task.InputRequests {
		var ask mcp.ElicitRequest
		if err := json.Unmarshal(req.Params, &ask); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s %q\n", key, req.Method, ask.Message)
		// The user said yes; the answer is the elicitation's result.
		answer := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}
		if err := c.UpdateTask(ctx, task.ID, map[string]any{key: answer}); err != nil {
			log.Fatal(err)
		}
	}

	task, err = c.GetTask(ctx, task.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status, task.StatusMessage)

	if _, err := c.CancelTask(ctx, task.ID); err != nil {
		log.Fatal(err)
	}
	task, err = c.GetTask(ctx, task.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status, task.StatusMessage)
	// Output:
	// deploy-1 working queued
	// input_required waiting for a go-ahead
	// confirm: elicitation/create "Deploy to production?"
	// working deploying
	// cancelled stopped by the user
}
