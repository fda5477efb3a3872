package mcp

import "github.com/mcplug/mcplug/internal/redact"

// redactURL returns rawURL without its secrets (see redact.URL): the
// password of its user information and every query value are replaced.
func redactURL(rawURL string) string { return redact.URL(rawURL) }
