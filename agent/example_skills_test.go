package agent_test

import (
	"context"
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
