// Package config reads the MCP server entries of the config files Claude
// Code reads, with Claude Code's scopes, approvals and workspace trust.
//
//	cfg, err := config.Load(".") // ~/.claude.json, .mcp.json, settings files
//	if err != nil {
//		log.Print(err) // a bad file or entry; the good ones are in cfg
//	}
//	m := mcp.NewManager(cfg, nil)
//
// mcp.LoadConfig is Load, for programs that need nothing else of this
// package. As in Claude Code, $CLAUDE_CONFIG_DIR moves the user's own
// files (~/.claude.json and ~/.claude/settings.json) into that folder, for
// reads and writes (ConfigDirEnv).
//
// Every file inside a project may have come with a git clone, so nothing
// a repository ships decides what runs: a project server (ScopeProject)
// needs the user's approval (Approval, SaveApproval), and the approvals
// kept inside the project count only in a workspace the user trusts
// (Workspace, SaveTrust). Files are read only when they are regular files
// within a size bound (ErrNotRegularFile, ErrFileTooLarge), and written
// only as regular files, never through a symlink but the user's own
// ~/.claude.json link (ErrNotOwned).
package config
