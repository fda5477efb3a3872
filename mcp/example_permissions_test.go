package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/config"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// Permission rules usually come from the settings files (config.Load reads
// permissions.allow, deny and ask); here the program writes them. A tool
// a deny rule matches is not offered, and a call to it is refused; a call
// a rule asks about goes to AskPermission.
func ExampleManager_Permissions() {
	ctx := context.Background()
	deny, _ := config.ParseRule("mcp__calc__echo", config.Deny)
	ask, _ := config.ParseRule("mcp__calc__add", config.Ask)
	cfg := &mcp.Config{Permissions: &config.Permissions{Rules: []config.Rule{deny, ask}}}
	m := mcp.NewManager(cfg, &mcp.ManagerOptions{
		AskPermission: func(ctx context.Context, req *mcp.PermissionRequest) bool {
			fmt.Printf("allow %s(%s)? yes\n", req.Tool, req.Args)
			return true
		},
	})
	defer m.Close()
	m.Add("calc", (&mcptest.Server{Name: "calc"}).Transport())

	tools, err := m.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println("offered:", t.Name)
	}
	_, err = m.CallTool(ctx, "mcp__calc__echo", map[string]string{"text": "hi"})
	fmt.Println(errors.Is(err, mcp.ErrPermissionDenied), err)
	res, err := m.CallTool(ctx, "mcp__calc__add", json.RawMessage(`{"a":17,"b":25}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("17 + 25 =", res.Text())
	// Output:
	// offered: mcp__calc__add
	// true mcp: tool "mcp__calc__echo" is denied by the permission rule "mcp__calc__echo" (permissions.deny)
	// allow mcp__calc__add({"a":17,"b":25})? yes
	// 17 + 25 = 42
}
