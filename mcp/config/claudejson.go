package config

import (
	"bufio"
	"bytes"
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
		if !slices.Contains(keys, name.String()) {
			if err := dec.SkipValue(); err != nil {
				return err
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

// setTrust copies the JSON object of ~/.claude.json from r to w with
// "hasTrustDialogAccepted": true in the entry of project root, token by
// token: members keep their order and values their text, and memory stays
// small however large the file's history is. The output is indented as
// Claude Code writes the file (two spaces).
func setTrust(r io.Reader, w io.Writer, root string) error {
	dec := jsontext.NewDecoder(bufio.NewReaderSize(r, 64<<10), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	enc := jsontext.NewEncoder(w, jsontext.Multiline(true), jsontext.WithIndent("  "), jsontext.SpaceAfterColon(true),
		jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	trustEntry := func() error {
		for _, t := range []jsontext.Token{jsontext.BeginObject, jsontext.String("hasTrustDialogAccepted"), jsontext.True, jsontext.EndObject} {
			if err := enc.WriteToken(t); err != nil {
				return err
			}
		}
		return nil
	}
	tok, err := dec.ReadToken()
	switch {
	case errors.Is(err, io.EOF): // an empty file is an empty object
		dec = jsontext.NewDecoder(bytes.NewReader([]byte("{}")))
		_, _ = dec.ReadToken()
	case err != nil:
		return fmt.Errorf("not a JSON object: %w", err)
	case tok.Kind() != '{':
		return errors.New("not a JSON object")
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	sawProjects := false
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		n := name.String()
		if err := enc.WriteToken(jsontext.String(n)); err != nil {
			return err
		}
		if n != "projects" {
			if err := copyValue(dec, enc); err != nil {
				return err
			}
			continue
		}
		sawProjects = true
		if k := dec.PeekKind(); k != '{' {
			return errors.New(`"projects" is not an object`)
		}
		if err := copyMembers(dec, enc, root, func(found bool) error {
			if found {
				if dec.PeekKind() != '{' {
					return fmt.Errorf("the entry of project %s is not an object", root)
				}
				return copyMembers(dec, enc, "hasTrustDialogAccepted", func(found bool) error {
					if found {
						if err := dec.SkipValue(); err != nil {
							return err
						}
					}
					return enc.WriteToken(jsontext.True)
				})
			}
			return trustEntry()
		}); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if !sawProjects {
		if err := enc.WriteToken(jsontext.String("projects")); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.String(root)); err != nil {
			return err
		}
		if err := trustEntry(); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.EndObject); err != nil {
			return err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return errors.New("not a JSON object: more than one JSON value")
	}
	return nil
}

// copyMembers copies the object the decoder is at, member by member; the
// member named key (its last, if given twice) is written by value instead,
// after its name, told whether it was found; a missing key is added at the
// end.
func copyMembers(dec *jsontext.Decoder, enc *jsontext.Encoder, key string, value func(found bool) error) error {
	if _, err := dec.ReadToken(); err != nil { // '{'
		return err
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	found := false
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		n := name.String()
		if err := enc.WriteToken(jsontext.String(n)); err != nil {
			return err
		}
		if n == key {
			found = true
			if err := value(true); err != nil {
				return err
			}
			continue
		}
		if err := copyValue(dec, enc); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return err
	}
	if !found {
		if err := enc.WriteToken(jsontext.String(key)); err != nil {
			return err
		}
		if err := value(false); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// copyValue copies one value, token by token.
func copyValue(dec *jsontext.Decoder, enc *jsontext.Encoder) error {
	depth := dec.StackDepth()
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if err := enc.WriteToken(tok); err != nil {
			return err
		}
		if dec.StackDepth() == depth {
			return nil
		}
	}
}
