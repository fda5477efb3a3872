package mcp

import (
	"context"
	"fmt"

	"github.com/mcplug/mcplug/mcp/config"
)

// Config is the servers of the config files Claude Code reads: see
// package github.com/mcplug/mcplug/mcp/config.
type Config = config.Config

// LoadConfig is config.Load: it reads the config files of a project
// directory the way Claude Code does (~/.claude.json, the .mcp.json files
// of dir and its parents, the settings files), with Claude Code's scopes,
// approvals and workspace trust. The Config is never nil; the error joins
// the problems of its files and entries, which never hide the good ones.
func LoadConfig(dir string) (*Config, error) { return config.Load(dir) }

// transportFor returns the Transport of a config entry: a CommandTransport
// for stdio; for http, Streamable HTTP falling back to HTTP+SSE
// (NewHTTPTransport); for sse, an SSETransport. Its headers are taken now,
// the entry's headersHelper run within ctx.
func transportFor(ctx context.Context, sc *config.Server) (Transport, error) {
	if sc.Err != nil {
		return nil, sc.Err
	}
	if sc.Disabled {
		return nil, fmt.Errorf("mcp: server %q is disabled", sc.Name)
	}
	switch sc.Type {
	case config.TypeStdio, "":
		return &CommandTransport{Command: sc.Cmd()}, nil
	case config.TypeHTTP, config.TypeSSE:
		h, err := sc.HTTPHeader(ctx)
		if err != nil {
			return nil, err
		}
		if sc.Type == config.TypeSSE {
			return &SSETransport{URL: sc.URL, Headers: h}, nil
		}
		return NewHTTPTransport(sc.URL, h), nil
	default:
		return nil, fmt.Errorf("mcp: server %q: unknown type %q", sc.Name, sc.Type)
	}
}
