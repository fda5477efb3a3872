package config

import (
	"encoding/json"
	"path/filepath"

	"github.com/mcplug/mcplug/internal/safefile"
)

// approvalSettings are the user's decisions on project servers, as Claude
// Code's settings keep them.
type approvalSettings struct {
	all      bool
	enabled  map[string]bool
	disabled map[string]bool
}

// approvalKeys are the members of a settings file (or of a project's
// entry of ~/.claude.json) that decide on project servers.
var approvalKeys = []string{"enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"}

// read adds the decisions of the members m of a settings object, read
// with exact keys; a member that is not of its type is passed over, as
// Claude Code passes it over.
func (a *approvalSettings) read(m map[string]json.RawMessage) {
	var all bool
	var enabled, disabled []string
	if field(m, "enableAllProjectMcpServers", &all) == nil {
		a.all = a.all || all
	}
	if field(m, "enabledMcpjsonServers", &enabled) == nil {
		for _, n := range enabled {
			if a.enabled == nil {
				a.enabled = map[string]bool{}
			}
			a.enabled[n] = true
		}
	}
	if field(m, "disabledMcpjsonServers", &disabled) == nil {
		for _, n := range disabled {
			if a.disabled == nil {
				a.disabled = map[string]bool{}
			}
			a.disabled[n] = true
		}
	}
}

// decide is what the settings together say of the project server name:
// a rejection in any of all wins (a rejection only narrows what runs, so it
// counts wherever it is written), then an approval in any of approvers.
func decide(name string, all []*approvalSettings, approvers ...*approvalSettings) Approval {
	for _, a := range all {
		if a.disabled[name] {
			return Rejected
		}
	}
	for _, a := range approvers {
		if a.all || a.enabled[name] {
			return Approved
		}
	}
	return ApprovalPending
}

// SaveApproval records the user's decision on the project server name in
// <root>/.claude/settings.local.json, root being the project root of dir
// (see Workspace): the name is added to "enabledMcpjsonServers" or
// "disabledMcpjsonServers" and removed from the other. The file's other
// settings are kept; it is created with mode 0600 when missing. Neither
// the file nor its .claude folder may be a symlink (a repository could
// ship one pointing at the user's own settings): the error then matches
// ErrNotRegularFile. Like Claude Code, Load counts a rejection there
// always, an approval only in a trusted workspace (SaveTrust).
func SaveApproval(dir, name string, approve bool) error {
	ws, err := findWorkspace(dir)
	if err != nil {
		return &Error{File: dir, Err: err}
	}
	folder := filepath.Join(ws.Root, ".claude")
	path := filepath.Join(folder, "settings.local.json")
	settings, err := safefile.ReadJSONObject(path, maxProjectFileSize) // safefile.Write refuses a symlink
	if err != nil {
		return &Error{File: path, Err: err}
	}
	list := func(key string) []any {
		var out []any
		if arr, ok := settings[key].([]any); ok {
			for _, v := range arr {
				if s, ok := v.(string); !ok || s != name {
					out = append(out, v)
				}
			}
		}
		return out
	}
	enabled, disabled := list("enabledMcpjsonServers"), list("disabledMcpjsonServers")
	if approve {
		enabled = append(enabled, name)
	} else {
		disabled = append(disabled, name)
	}
	settings["enabledMcpjsonServers"], settings["disabledMcpjsonServers"] = enabled, disabled
	if len(enabled) == 0 {
		delete(settings, "enabledMcpjsonServers")
	}
	if len(disabled) == 0 {
		delete(settings, "disabledMcpjsonServers")
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.Write(folder, "settings.local.json", append(out, '\n')); err != nil {
		return &Error{File: path, Err: err}
	}
	return nil
}
