package config

import "github.com/mcplug/mcplug/internal/safefile"

// Bounds on the config and settings files Load reads. The user's
// ~/.claude.json also keeps Claude Code's per-project history, so it may
// grow large; a file that came with a project has no reason to.
const (
	maxClaudeJSONSize  = 1 << 30  // ~/.claude.json, streamed: Claude Code keeps history there (users see 100 MB)
	maxUserFileSize    = 64 << 20 // ~/.claude/settings.json, and a file given to LoadFile
	maxProjectFileSize = 4 << 20  // .mcp.json, .claude/settings*.json of a project
)

// ErrNotRegularFile is matched by the error for a config or settings file
// that is a device, a pipe, a directory or anything else that is not a
// regular file (a symlink to a regular file is read). Such a file is not
// read, nor written.
var ErrNotRegularFile = safefile.ErrNotRegular

// ErrFileTooLarge is matched by the error for a config or settings file
// larger than its bound (1 GiB for ~/.claude.json, 64 MiB for the
// user's other files, 4 MiB for a project's). Such a file is not read.
var ErrFileTooLarge = safefile.ErrTooLarge

// ErrNotOwned is matched by the error of a write through a link in
// ~/.claude.json's place that another user owns, or that leads to a
// file or into a folder another user owns, or into a folder every user
// may write to. Nothing is written.
var ErrNotOwned = safefile.ErrNotOwned
