// Command client is the mcplug client for the official MCP conformance
// suite (@modelcontextprotocol/conformance). The suite starts it once per
// scenario with the scenario's name in MCP_CONFORMANCE_SCENARIO, optional
// context (JSON) in MCP_CONFORMANCE_CONTEXT, and the server's URL as the last
// argument. internal/conformance/run.sh drives it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcplug/mcplug/mcp"
	"github.com/mcplug/mcplug/mcp/auth"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url>  (scenario in $MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := run(scenario, url, logger); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

func run(scenario, serverURL string, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	t := mcp.NewHTTPTransport(serverURL, nil)
	t.Logger = logger
	a, err := authorizer(serverURL, logger)
	if err != nil {
		return err
	}
	t.Auth = a
	c, err := mcp.Connect(ctx, t, &mcp.Options{
		Logger:     logger,
		ClientInfo: &mcp.Implementation{Name: "mcplug-conformance", Version: mcp.Version},
		// Accept every form; the library completes it with the schema's defaults.
		ElicitForm: func(context.Context, *mcp.Connection, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
		Sampling: func(_ context.Context, _ *mcp.Connection, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: []mcp.Content{{Type: "text", Text: "sampled"}}, Model: "conformance", StopReason: "endTurn"}, nil
		},
		Roots:      []mcp.Root{},
		Extensions: mcp.SkillsExtension(),
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if scenario == "initialize" {
		return nil
	}
	if strings.HasPrefix(scenario, "sep-2640-client-") {
		return skills(ctx, c, scenario)
	}
	tools, err := c.Tools(ctx)
	if err != nil {
		return err
	}
	switch scenario {
	case "json-schema-ref-no-deref": // listing is the test: no $ref may be fetched
		return nil
	case "http-custom-headers":
		// Values of every kind the x-mcp-header rules treat apart: plain,
		// integer, boolean, and strings that need the Base64 form.
		if err := call(ctx, c, "test_custom_headers", map[string]any{
			"region": "us-west1", "priority": 7, "verbose": true, "debug": false, "query": "SELECT 1",
			"non_ascii_val": "Hello, 世界", "whitespace_val": " padded ", "leading_space_val": " lead",
			"trailing_space_val": "trail ", "internal_space_val": "a b c", "control_char_val": "bell\u0007",
			"crlf_val": "line1\r\nline2", "tab_val": "\tindented", "float_val": 1.5,
		}); err != nil {
			return err
		}
		return call(ctx, c, "test_custom_headers_null", map[string]any{"region": "eu", "priority": 1, "verbose": nil, "query": "q"})
	case "tools_call":
		return call(ctx, c, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "json-schema-2020-12-preservation":
		// Send the focal tool's inputSchema back, as received, to the echo tool.
		var focal, echo *mcp.Tool
		for i := range tools {
			if strings.HasPrefix(tools[i].Description, "Echoes") {
				echo = &tools[i]
			} else {
				focal = &tools[i]
			}
		}
		if focal == nil || echo == nil {
			return fmt.Errorf("expected a focal tool and an echo tool, got %d tools", len(tools))
		}
		return call(ctx, c, echo.Name, map[string]json.RawMessage{"schema": focal.InputSchema})
	default:
		for _, tool := range tools {
			if err := call(ctx, c, tool.Name, nil); err != nil {
				return err
			}
		}
		return nil
	}
}

// authorizer signs in as the suite's scenarios expect, from what the
// scenario's context gives, as a program's config would: a private key
// (client credentials with private_key_jwt), an identity provider
// (enterprise-managed authorization), a workload token (JWT bearer), a
// client secret without an issuer (client credentials), or a
// pre-registered client for a user's sign-in; else the suite's client ID
// metadata document URL or dynamic registration, and a "browser" that
// follows the authorization endpoint's redirect without a user. Tokens are
// DPoP-bound where the authorization server supports it.
func authorizer(serverURL string, logger *slog.Logger) (*auth.Client, error) {
	var sc struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		Issuer           string `json:"issuer"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		SigningAlgorithm string `json:"signing_algorithm"`
		IDPClientID      string `json:"idp_client_id"`
		IDPIDToken       string `json:"idp_id_token"`
		IDPTokenEndpoint string `json:"idp_token_endpoint"`
		ValidJWT         string `json:"valid_jwt"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		json.Unmarshal([]byte(c), &sc)
	}
	cfg := &auth.Config{
		ServerURL:           serverURL,
		ClientIDMetadataURL: "https://conformance-test.local/client-metadata.json",
		ClientName:          "mcplug-conformance",
		RedirectURL:         "http://localhost:3000/callback",
		Browser:             followRedirect,
		DPoP:                true,
		Logger:              logger,
	}
	switch {
	case sc.PrivateKeyPEM != "":
		key, err := auth.ParsePrivateKey([]byte(sc.PrivateKeyPEM))
		if err != nil {
			return nil, err
		}
		cfg.Grant = &auth.ClientCredentials{ClientID: sc.ClientID, PrivateKey: key, SigningAlg: sc.SigningAlgorithm}
	case sc.IDPTokenEndpoint != "":
		cfg.Grant = &auth.EnterpriseManaged{
			ClientID: sc.ClientID, ClientSecret: sc.ClientSecret,
			IDPTokenEndpoint: sc.IDPTokenEndpoint, IDPClientID: sc.IDPClientID,
			IDToken: func(context.Context) (string, error) { return sc.IDPIDToken, nil },
		}
	case sc.ValidJWT != "":
		cfg.Grant = &auth.JWTBearer{ClientID: sc.ClientID, Assertion: func(context.Context) (string, error) { return sc.ValidJWT, nil }}
	case sc.ClientSecret != "" && sc.Issuer == "":
		cfg.Grant = &auth.ClientCredentials{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret}
	default:
		cfg.ClientID, cfg.ClientSecret, cfg.Issuer = sc.ClientID, sc.ClientSecret, sc.Issuer
	}
	return auth.New(cfg), nil
}

// followRedirect plays the user's browser: the authorization endpoint
// answers with a redirect to the redirect URI, which is the result.
func followRedirect(ctx context.Context, authURL string) (*url.URL, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint answered %s without a redirect", resp.Status)
	}
	return loc, nil
}

func call(ctx context.Context, c *mcp.Connection, name string, args any) error {
	res, err := c.CallTool(ctx, name, args)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", name, err)
	}
	fmt.Printf("%s: %s\n", name, res.Text())
	return nil
}
