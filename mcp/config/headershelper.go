package config

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mcplug/mcplug/internal/headershelper"
)

// ErrHeadersHelper is matched by the error of a server whose headersHelper
// could not give its headers: it failed, printed no JSON object of
// strings, printed more than 64 KiB, did not finish within 10 seconds, or
// may not run (a project entry of a workspace that is not trusted).
var ErrHeadersHelper = errors.New("mcp: headersHelper")

// HTTPHeader returns the headers of an http or sse entry: Headers, and
// those its HeadersHelper gives (which win). The helper runs at each call,
// bounded by ctx beside its own bounds; its output is never logged or
// quoted in an error. A project entry's helper runs only in a trusted
// workspace: otherwise the error matches ErrHeadersHelper and nothing
// runs.
func (sc *Server) HTTPHeader(ctx context.Context) (http.Header, error) {
	h := sc.header()
	if sc.HeadersHelper == "" {
		return h, nil
	}
	if sc.Scope == ScopeProject && !sc.trusted {
		return nil, fmt.Errorf("%w of server %q: not run: it comes with the project, and the workspace is not trusted (config.SaveTrust, mcpls -trust)", ErrHeadersHelper, sc.Name)
	}
	extra, err := headershelper.Run(ctx, sc.HeadersHelper, sc.workDir())
	if err != nil {
		return nil, fmt.Errorf("%w of server %q: %w", ErrHeadersHelper, sc.Name, err)
	}
	for k, v := range extra {
		h.Set(k, v)
	}
	return h, nil
}
