package mcp_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// A Manager's skills: listed (nothing of them read), one loaded under the
// host's approval, its SKILL.md and a file it names read from its own
// server and verified against its entry.
func ExampleManager_LoadSkill() {
	srv := &mcptest.Server{} // a server that serves one skill
	srv.AddSkills(mcptest.Skill{Path: "pdf-processing", Files: map[string]string{
		"SKILL.md":            "---\nname: pdf-processing\ndescription: Fill PDF forms\n---\nFill the form as references/FORMS.md says.\n",
		"references/FORMS.md": "The name goes in box 1.\n",
	}})
	ctx := context.Background()

	m := mcp.NewManager(nil, &mcp.ManagerOptions{Skills: &mcp.SkillOptions{
		Approve: func(ctx context.Context, req *mcp.SkillApprovalRequest) mcp.SkillDecision {
			fmt.Printf("load %s of server %s? yes\n", req.Skill.Ref, req.Skill.Server)
			return mcp.SkillDecision{Load: true, Remember: true} // bound to its files as they are now
		},
		// Approvals: &mcp.SkillApprovalFile{Path: "..."} keeps them across runs
	}})
	defer m.Close()
	m.Add("docs", srv.Transport())

	skills, err := m.Skills(ctx) // every server's; no file of any skill is read
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range skills {
		fmt.Printf("%s: %s\n", s.Ref, s.Description)
	}
	skill, err := m.LoadSkill(ctx, "docs:pdf-processing") // approved, then SKILL.md read and verified
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(skill.Body))
	forms, err := skill.Read(ctx, "references/FORMS.md") // from docs only, size and digest checked
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(forms.Content))
	// Output:
	// docs:pdf-processing: Fill PDF forms
	// load docs:pdf-processing of server docs? yes
	// Fill the form as references/FORMS.md says.
	// The name goes in box 1.
}
