package config

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcplug/mcplug/internal/safefile"
)

// claudeJSON is what Load takes of ~/.claude.json: its top-level
// "mcpServers" and the entries of "projects" it asked for. Claude Code
// keeps each project's history in the same file, which users see grow
// past 100 MB, so the file is streamed and everything else is skipped
// unparsed: memory stays in proportion to what is kept, not to the file.
type claudeJSON struct {
	servers  json.RawMessage                       // nil when absent
	projects map[string]map[string]json.RawMessage // the entries asked for that are present: their members Load reads
	// others are the "mcpServers" of the other projects' entries, by
	// project: only the variables they name count (Config.Variables).
	others   map[string]json.RawMessage
	warnings []string
}

// readClaudeJSON reads path, at most max bytes, keeping the project
// entries named in keys. A missing file gives (nil, nil); a file that is
// not one JSON object is an error, as JSON.parse would make it.
func readClaudeJSON(path string, max int64, keys []string) (*claudeJSON, error) {
	f, err := safefile.Open(path, max)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: max + 1}
	dec := jsontext.NewDecoder(bufio.NewReaderSize(lr, 64<<10),
		jsontext.AllowDuplicateNames(true), // the last one wins, as in JSON.parse
		jsontext.AllowInvalidUTF8(true))    // JavaScript strings may hold lone surrogates
	out := &claudeJSON{projects: map[string]map[string]json.RawMessage{}}
	err = out.decode(dec, keys)
	if lr.N <= 0 {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrFileTooLarge, max)
	}
	if errors.Is(err, errEmpty) {
		return out, nil // an empty file is an empty object
	}
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return out, nil
}

var errEmpty = errors.New("empty")

// projectKeys are the members of a project's entry Load reads; the rest
// (its history among them) is skipped.
var projectKeys = []string{"hasTrustDialogAccepted", "mcpServers", "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"}

func (c *claudeJSON) decode(dec *jsontext.Decoder, keys []string) error {
	if tok, err := dec.ReadToken(); errors.Is(err, io.EOF) {
		return errEmpty
	} else if err != nil {
		return err
	} else if tok.Kind() != '{' {
		return fmt.Errorf("the file holds a %v, not an object", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		switch n := name.String(); n {
		case "mcpServers":
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			c.servers = json.RawMessage(slices.Clone(v))
		case "projects":
			if err := c.decodeProjects(dec, keys); err != nil {
				return err
			}
		default:
			c.warnCase(n, "", "mcpServers", "projects")
			if err := dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more than one JSON value")
		}
		return err
	}
	return nil
}

func (c *claudeJSON) decodeProjects(dec *jsontext.Decoder, keys []string) error {
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if key := name.String(); !slices.Contains(keys, key) {
			servers, err := otherServers(dec)
			if err != nil {
				return err
			}
			if servers != nil {
				if c.others == nil {
					c.others = map[string]json.RawMessage{}
				}
				c.others[key] = servers
			}
			continue
		}
		key := name.String()
		entry, err := c.decodeProject(dec, key)
		if err != nil {
			return err
		}
		if entry != nil {
			c.projects[key] = entry
		}
	}
	_, err := dec.ReadToken() // '}'
	return err
}

// otherServers reads the entry of a project Load does not read for, and
// returns its "mcpServers" (the last, as in JSON.parse), or nil.
func otherServers(dec *jsontext.Decoder) (json.RawMessage, error) {
	if dec.PeekKind() != '{' {
		return nil, dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	var servers json.RawMessage
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if name.String() != "mcpServers" {
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		servers = json.RawMessage(slices.Clone(v))
	}
	_, err := dec.ReadToken() // '}'
	return servers, err
}

// decodeProject reads the entry of project key: the members of
// projectKeys, skipping the rest; nil for an entry that is not an object.
func (c *claudeJSON) decodeProject(dec *jsontext.Decoder, key string) (map[string]json.RawMessage, error) {
	if dec.PeekKind() != '{' {
		return nil, dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	entry := map[string]json.RawMessage{}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		n := name.String()
		if !slices.Contains(projectKeys, n) {
			c.warnCase(n, "the entry of project "+key+": ", projectKeys...)
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		entry[n] = json.RawMessage(slices.Clone(v))
	}
	_, err := dec.ReadToken() // '}'
	return entry, err
}

// warnCase notes a member name that differs from one of known only by
// case: it is not read.
func (c *claudeJSON) warnCase(name, where string, known ...string) {
	for _, k := range known {
		if name != k && strings.EqualFold(name, k) {
			c.warnings = append(c.warnings, fmt.Sprintf("%sthe key %q is not read (the key is %q: keys are matched exactly, as Claude Code reads them)", where, name, k))
		}
	}
}
