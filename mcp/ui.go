package mcp

// MCP Apps (io.modelcontextprotocol/ui): the metadata that ties a tool to
// a view, a ui:// resource a host renders, and what the view may reach.
// It is read by exact key, as the hosts of the extension read it: a
// "Visibility" is not a "visibility", and a key given twice is an error.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
)

// ExtensionUI names the MCP Apps extension. A client declares it (see
// Options.Extensions) only when it renders views; UIExtension is the
// declaration.
const ExtensionUI = "io.modelcontextprotocol/ui"

// MIMETypeApp is the MIME type of a view: HTML for a host to render.
const MIMETypeApp = "text/html;profile=mcp-app"

// UIExtension returns the declaration of ExtensionUI with the MIME types a
// host renders, for Options.Extensions or ManagerOptions.Extensions.
func UIExtension() map[string]json.RawMessage {
	return map[string]json.RawMessage{ExtensionUI: json.RawMessage(`{"mimeTypes":["` + MIMETypeApp + `"]}`)}
}

// Who a tool is visible to: the model, the views of its server, or both
// (when its visibility is not given).
const (
	VisibilityModel = "model"
	VisibilityApp   = "app"
)

// ToolUI is a tool's _meta.ui: the view that shows its results, and who
// may call it.
type ToolUI struct {
	ResourceURI string   `json:"resourceUri,omitempty"` // a ui:// resource
	Visibility  []string `json:"visibility,omitempty"`  // VisibilityModel, VisibilityApp; empty means both
}

// VisibleTo reports whether the tool may be offered to who
// (VisibilityModel or VisibilityApp): an empty visibility admits both.
func (u *ToolUI) VisibleTo(who string) bool {
	return u == nil || len(u.Visibility) == 0 || slices.Contains(u.Visibility, who)
}

// UI returns the tool's _meta.ui, nil when it has none. The resource is
// also read from the older key _meta["ui/resourceUri"]. A _meta.ui that is
// not of its shape (a visibility that is not a list of strings, a
// resourceUri that is not a ui:// URI) is an error matching ErrBadResult:
// a host should then offer the tool to no one, since it cannot tell
// whom it was meant for.
func (t *Tool) UI() (*ToolUI, error) {
	if len(t.Meta) == 0 {
		return nil, nil
	}
	var meta struct {
		UI     json.RawMessage `json:"ui"`
		Legacy *string         `json:"ui/resourceUri"`
	}
	if err := jsonv2.Unmarshal(t.Meta, &meta); err != nil {
		return nil, fmt.Errorf("mcp: tool %q: %w: _meta: %v", t.Name, ErrBadResult, err)
	}
	if (len(meta.UI) == 0 || string(meta.UI) == "null") && meta.Legacy == nil {
		return nil, nil
	}
	var ui ToolUI
	if len(meta.UI) > 0 && string(meta.UI) != "null" {
		if err := jsonv2.Unmarshal(meta.UI, &ui); err != nil {
			return nil, fmt.Errorf("mcp: tool %q: %w: _meta.ui: %v", t.Name, ErrBadResult, err)
		}
	}
	if ui.ResourceURI == "" && meta.Legacy != nil {
		ui.ResourceURI = *meta.Legacy
	}
	if ui.ResourceURI != "" && !strings.HasPrefix(ui.ResourceURI, "ui://") {
		return nil, fmt.Errorf("mcp: tool %q: %w: _meta.ui.resourceUri %q is not a ui:// URI", t.Name, ErrBadResult, ui.ResourceURI)
	}
	for _, v := range ui.Visibility {
		if v != VisibilityModel && v != VisibilityApp {
			return nil, fmt.Errorf("mcp: tool %q: %w: _meta.ui.visibility %q is neither %q nor %q", t.Name, ErrBadResult, v, VisibilityModel, VisibilityApp)
		}
	}
	return &ui, nil
}

// visibleTo reports whether the tool may be offered to who; a tool whose
// _meta.ui cannot be read is offered to no one.
func (t *Tool) visibleTo(who string) bool {
	ui, err := t.UI()
	return err == nil && ui.VisibleTo(who)
}

// ResourceUI is a view's _meta.ui: what its content may load and reach
// (CSP), the browser permissions it asks for, the origin it asks to run
// on, and whether it would like a border.
type ResourceUI struct {
	CSP           *ResourceCSP         `json:"csp,omitempty"`
	Permissions   *ResourcePermissions `json:"permissions,omitempty"`
	Domain        string               `json:"domain,omitempty"`
	PrefersBorder *bool                `json:"prefersBorder,omitempty"`
}

// ResourceCSP lists the origins a view may reach, by kind. A kind not
// listed is denied: a view with no CSP may load nothing from the network.
type ResourceCSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`  // fetch, XHR, WebSocket: connect-src
	ResourceDomains []string `json:"resourceDomains,omitempty"` // scripts, styles, images, fonts, media
	FrameDomains    []string `json:"frameDomains,omitempty"`    // nested frames: frame-src
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`  // base-uri
}

// ResourcePermissions are the browser permissions a view asks for; a nil
// field is not asked for.
type ResourcePermissions struct {
	Camera         *struct{} `json:"camera,omitempty"`
	Microphone     *struct{} `json:"microphone,omitempty"`
	Geolocation    *struct{} `json:"geolocation,omitempty"`
	ClipboardWrite *struct{} `json:"clipboardWrite,omitempty"`
}

// UI returns the contents' _meta.ui, nil when it has none; one not of its
// shape is an error matching ErrBadResult.
func (rc *ResourceContents) UI() (*ResourceUI, error) {
	if len(rc.Meta) == 0 {
		return nil, nil
	}
	var meta struct {
		UI *ResourceUI `json:"ui"`
	}
	if err := jsonv2.Unmarshal(rc.Meta, &meta); err != nil {
		return nil, fmt.Errorf("mcp: resource %q: %w: _meta.ui: %v", rc.URI, ErrBadResult, err)
	}
	return meta.UI, nil
}
