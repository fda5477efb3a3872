package config

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mcplug/mcplug/internal/headershelper"
	"github.com/mcplug/mcplug/internal/managedpath"
)

// SetHeadersHelperTimeout changes the bound of a headersHelper command,
// and returns a function that restores it.
func SetHeadersHelperTimeout(d time.Duration) func() {
	old := headershelper.Timeout
	headershelper.Timeout = d
	return func() { headershelper.Timeout = old }
}

// SetManagedDir points the reading of the organisation's policy at dir
// until the test ends.
func SetManagedDir(t interface{ Cleanup(func()) }, dir string) {
	old := managedpath.Dir
	managedpath.Dir = dir
	t.Cleanup(func() { managedpath.Dir = old })
}

// SetLockWait bounds the wait for a lock until the test ends.
func SetLockWait(t interface{ Cleanup(func()) }, d time.Duration) {
	old := lockWait
	lockWait = d
	t.Cleanup(func() { lockWait = old })
}

// EditJSON applies sets (value non-empty) and removals (value "") of
// members of the object at path to doc, as the writes do.
func EditJSON(doc string, path []string, name, value string) (string, error) {
	var v json.RawMessage
	if value != "" {
		v = json.RawMessage(value)
	}
	r := strings.NewReader(doc)
	spans, err := locate(r, [][]string{path})
	if err != nil {
		return "", withLine(err, strings.NewReader(doc))
	}
	splices, err := plan(strings.NewReader(doc), int64(len(doc)), spans, []jsonEdit{{path: path, name: name, value: v}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = apply(&b, strings.NewReader(doc), int64(len(doc)), splices)
	return b.String(), err
}

// HoldsSecret reports whether the server entry raw holds a secret, as
// the writes decide it.
func HoldsSecret(raw string) bool { return holdsSecret([]byte(raw)) }
