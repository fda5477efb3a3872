package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The config files are read with exact keys, as JavaScript reads them:
// encoding/json matches a struct's keys without regard to case (the last
// one wins), so {"command": "true", "Command": "sh"} would run sh where
// Claude Code, its approval dialog and a person reading the file all see
// true. Every object is decoded into its members by exact name here, and a
// member whose name differs from a known one only by case is an error.

// members decodes the JSON object b into its members, by exact name (a
// name given twice keeps its last value, as JSON.parse does). It fails on
// anything but an object.
func members(b []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// caseMismatch returns an error naming the members of m whose name differs from one of known only by case, or nil.
func caseMismatch(m map[string]json.RawMessage, known ...string) error {
	var bad []string
	for name := range m {
		for _, k := range known {
			if name != k && strings.EqualFold(name, k) {
				bad = append(bad, fmt.Sprintf("%q (the key is %q: keys are matched exactly, as Claude Code reads them)", name, k))
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	if len(bad) == 1 {
		return fmt.Errorf("unknown key %s", bad[0])
	}
	return fmt.Errorf("unknown keys %s", strings.Join(bad, ", "))
}

// field decodes the member name of m, if present, into dst (a pointer to
// a string, bool, int, []string or map[string]string: types whose decoding
// involves no key matching). The error names the member.
func field(m map[string]json.RawMessage, name string, dst any) error {
	raw, ok := m[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	return nil
}
