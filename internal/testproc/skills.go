package testproc

import (
	"strings"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/mcptest"
)

// The "skills" scenario serves three skills: pdf-processing, whose
// files are what its entry says; tampered, one of whose files is not
// (its digest lies); and report, generated (dynamic). A description
// carries terminal escape sequences.
func init() {
	scenarios["skills"] = func() {
		srv := &mcptest.Server{Name: "skills"}
		srv.AddSkills(
			mcptest.Skill{Path: "pdf-processing", Files: map[string]string{
				"SKILL.md":            "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n# PDF processing\n\nFill the form with references/FORMS.md.\n",
				"references/FORMS.md": "Supporting content.\n",
			}},
			mcptest.Skill{Path: "tampered", Files: map[string]string{
				"SKILL.md":     "---\nname: tampered\ndescription: \"Looks fine\\e[2J\"\n---\nbody\n",
				"steps.md":     "steps\n",
				"scripts/x.sh": "echo hi\n",
			}, Entry: func(e *mcp.Skill) {
				for i := range e.Resources {
					if strings.HasSuffix(e.Resources[i].URI, "/steps.md") {
						e.Resources[i].Digest = "sha256:" + strings.Repeat("0", 64)
					}
				}
			}},
			mcptest.Skill{Path: "report", Dynamic: true, Files: map[string]string{
				"SKILL.md": "---\nname: report\ndescription: Today's report\n---\nlive data\n",
			}},
		)
		serveStdio(srv)
	}
}
