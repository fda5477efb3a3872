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

func (a *approvalSettings) read(b []byte) {
	var s struct {
		All      bool     `json:"enableAllProjectMcpServers"`
		Enabled  []string `json:"enabledMcpjsonServers"`
		Disabled []string `json:"disabledMcpjsonServers"`
	}
	if len(b) == 0 || json.Unmarshal(b, &s) != nil {
		return
	}
	a.all = a.all || s.All
	for _, n := range s.Enabled {
		if a.enabled == nil {
			a.enabled = map[string]bool{}
		}
		a.enabled[n] = true
	}
	for _, n := range s.Disabled {
		if a.disabled == nil {
			a.disabled = map[string]bool{}
		}
		a.disabled[n] = true
	}
}

// decide is what the settings together say of the project server name:
// a rejection in any wins, then an approval in any.
func decide(name string, settings ...*approvalSettings) Approval {
	approved := false
	for _, a := range settings {
		if a.disabled[name] {
			return Rejected
		}
		approved = approved || a.all || a.enabled[name]
	}
	if approved {
		return Approved
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
// ErrNotRegularFile. Like Claude Code, Load counts the file only in
// a trusted workspace (SaveTrust).
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
