package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcplug/mcplug/agent"
	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// The skills of a Manager's servers offered to a model: their index in
// the system prompt, and the Skill tool that loads one when the model
// asks. Here the model is scripted.
func ExampleSkills() {
	srv := &mcptest.Server{}
	srv.AddSkills(mcptest.Skill{Path: "greeting", Files: map[string]string{
		"SKILL.md": "---\nname: greeting\ndescription: How to greet the team\n---\nSay hello in French.\n",
	}})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{
		Approve: func(context.Context, *mcp.SkillApprovalRequest) mcp.SkillDecision {
			return mcp.SkillDecision{Load: true}
		},
	}})
	defer m.Close()
	m.Add("team", srv.Transport())

	skills := agent.NewSkills(m)
	model := &script{replies: []*agent.Response{
		call("Skill", `{"skill":"team:greeting"}`),
		answer("Bonjour !"),
	}}
	a := &agent.Agent{Model: model, Output: os.Stdout,
		Tools:    []agent.ToolProvider{m, skills}, // the servers' tools, and the Skill tool
		Sections: []agent.PromptSection{skills}}   // the index, in the system prompt
	if _, err := a.Chat(context.Background(), "Greet the team."); err != nil {
		log.Fatal(err)
	}
	// Output:
	//   → Skill({"skill":"team:greeting"})
	// Bonjour !
}

// A program that gives the model a tool that runs code on the host says
// so (RunsCode), and asks the user (ApproveCode) before the model runs
// code while acting on a skill of an MCP server: once a skill as
// loaded, not once a call. Here the model is scripted, and the user
// says yes.
func ExampleSkills_approveCode() {
	srv := &mcptest.Server{}
	srv.AddSkills(mcptest.Skill{Path: "release", Files: map[string]string{
		"SKILL.md":           "---\nname: release\ndescription: Release the site\n---\nRun scripts/release.sh.\n",
		"scripts/release.sh": "make release\n",
	}})
	m := mcp.NewManager(nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{
		Approve: func(context.Context, *mcp.SkillApprovalRequest) mcp.SkillDecision {
			return mcp.SkillDecision{Load: true}
		},
	}})
	defer m.Close()
	m.Add("team", srv.Transport())
	bash := agent.Func{Tool: mcp.Tool{Name: "Bash", Description: "Run a shell command."},
		Fn: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return agent.Text("released"), nil
		}}

	skills := agent.NewSkills(m)
	skills.RunsCode = func(tool string) bool { return tool == "Bash" } // the program's tools that run code
	skills.ApproveCode = func(ctx context.Context, skill *mcp.LoadedSkill, tool string, args json.RawMessage) bool {
		fmt.Printf("run code (%s) while acting on %s of server %s? yes\n", tool, skill.Ref, skill.Server)
		return true // for this skill as loaded: a skill loaded again with other files is asked again
	}
	model := &script{replies: []*agent.Response{
		call("Skill", `{"skill":"team:release"}`),
		call("Bash", `{"command":"sh scripts/release.sh"}`),
		call("Bash", `{"command":"git tag v1"}`),
		answer("Released."),
	}}
	a := &agent.Agent{Model: model, Output: os.Stdout,
		Tools:    []agent.ToolProvider{agent.Funcs{bash}, m, skills}, // skills is asked before every call
		Sections: []agent.PromptSection{skills}}
	if _, err := a.Chat(context.Background(), "Release the site."); err != nil {
		log.Fatal(err)
	}
	// Output:
	//   → Skill({"skill":"team:release"})
	//   → Bash({"command":"sh scripts/release.sh"})
	// run code (Bash) while acting on team:release of server team? yes
	//   → Bash({"command":"git tag v1"})
	// Released.
}
