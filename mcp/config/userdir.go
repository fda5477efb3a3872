package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// ConfigDirEnv names the variable that moves the user's own config files
// of Claude Code, as Claude Code reads it: when it is set, .claude.json
// (the user's and local servers, the projects' trust and approvals) and
// settings.json are the ones of that folder, read and written there, and
// ~/.claude.json and ~/.claude/settings.json are not read. A relative
// folder is taken from the working directory, as Claude Code takes it.
// The organisation's managed files and a project's own files
// (.mcp.json, .claude/settings.json, .claude/settings.local.json) stay
// where they are. An empty value counts as unset (Claude Code then reads
// a settings.json of the working directory, which a repository could
// ship; this package does not).
const ConfigDirEnv = "CLAUDE_CONFIG_DIR"

// userFiles are where the user's own files of Claude Code are.
type userFiles struct {
	// dir holds .claude.json: $CLAUDE_CONFIG_DIR, or the home directory.
	dir string
	// settings is the user's settings.json: in $CLAUDE_CONFIG_DIR, or
	// ~/.claude/settings.json.
	settings string
	// moved reports that $CLAUDE_CONFIG_DIR chose them.
	moved bool
}

// claudeJSON is the path of the user's .claude.json.
func (u userFiles) claudeJSON() string { return filepath.Join(u.dir, ".claude.json") }

// userConfig returns where the user's own files of Claude Code are (see
// ConfigDirEnv).
func userConfig() (userFiles, error) {
	if dir := os.Getenv(ConfigDirEnv); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return userFiles{}, fmt.Errorf("%s=%s: %w", ConfigDirEnv, dir, err)
		}
		return userFiles{dir: abs, settings: filepath.Join(abs, "settings.json"), moved: true}, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return userFiles{}, fmt.Errorf("no home directory (set HOME, or %s): %w", ConfigDirEnv, err)
	}
	return userFiles{dir: home, settings: filepath.Join(home, ".claude", "settings.json")}, nil
}

// userWriteDir is the folder of the user's .claude.json for a write,
// its links resolved (the folder is the user's own, wherever it leads).
func userWriteDir() (string, error) {
	u, err := userConfig()
	if err != nil {
		return "", err
	}
	dir := u.dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, nil
}
