package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/mcplug/mcplug/internal/testproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func skillsConfig(t *testing.T) string {
	t.Helper()
	entry := map[string]any{"command": os.Args[0], "args": []string{"-test.run=^$"}, "env": map[string]string{testproc.EnvScenario: "skills"}}
	return writeConfig(t, map[string]any{"docs": entry, "mirror": entry})
}

func TestSkillsAreListedAndShownWithTheirVerification(t *testing.T) {
	cfg := skillsConfig(t)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-config", cfg, "-skills"}, &stdout, &stderr), stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "docs:pdf-processing (server docs, skill://pdf-processing/SKILL.md, 2 files)\n    Extract, fill, and assemble PDF documents\n    same name as: mirror:pdf-processing\n")
	assert.Contains(t, out, "docs:report (server docs, skill://report/SKILL.md, dynamic)")
	assert.Contains(t, out, "Looks fine\ufffd[2J", "a server's text is shown with its controls replaced")
	assert.NotContains(t, out, "\x1b")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"-config", cfg, "-skill", "docs:pdf-processing"}, &stdout, &stderr), stderr.String())
	out = stdout.String()
	assert.Contains(t, out, "skill docs:pdf-processing\n  server  docs\n")
	assert.Contains(t, out, "  verified   skill://pdf-processing/SKILL.md (")
	assert.Contains(t, out, "  verified   skill://pdf-processing/references/FORMS.md (20 bytes)")
	assert.Contains(t, out, "# PDF processing")

	stdout.Reset()
	assert.Equal(t, 1, run([]string{"-config", cfg, "-skill", "mirror:tampered"}, &stdout, &stderr), "a file that fails verification")
	out = stdout.String()
	assert.Contains(t, out, "  FAILED     skill://tampered/steps.md\n             mcp: skill \"skill://tampered/SKILL.md\": file \"skill://tampered/steps.md\": digest sha256:")
	assert.Contains(t, out, "  verified   skill://tampered/scripts/x.sh")

	stdout.Reset()
	require.Equal(t, 0, run([]string{"-config", cfg, "-skill", "docs:report"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "  files   dynamic: the server generates them")
	assert.Contains(t, stdout.String(), "  unverified skill://report/SKILL.md")

	stderr.Reset()
	assert.Equal(t, 2, run([]string{"-config", cfg, "-skill", "docs:nothing"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "mcpls -skills")
	assert.Empty(t, testproc.LiveChildren())
}
