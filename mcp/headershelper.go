package mcp

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

// allHeaders are the entry's headers and those its headersHelper gives
// (which win). ctx bounds the helper, beside its own time bound.
func (sc *ServerConfig) allHeaders(ctx context.Context) (http.Header, error) {
	h := sc.header()
	if sc.HeadersHelper == "" {
		return h, nil
	}
	if sc.Scope == ScopeProject && !sc.trusted {
		return nil, fmt.Errorf("%w of server %q: not run: it comes with the project, and the workspace is not trusted (SaveTrust, mcpls -trust)", ErrHeadersHelper, sc.Name)
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
