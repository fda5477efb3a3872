package auth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Grant obtains tokens without a user, in place of the authorization code
// flow (Config.Grant): ClientCredentials, JWTBearer and EnterpriseManaged,
// the grants of the MCP authorization extensions. Their clients are
// registered beforehand; there is no dynamic registration.
type Grant interface {
	method() string
	clientID() string
	obtain(ctx context.Context, c *Client, g *grant) (*oauth2.Token, error)
}

// Grant types and token types of the extensions.
const (
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	assertionTypeJWT   = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// ClientCredentials is the client credentials grant of a machine client
// (the OAuth client credentials extension): authenticated with a secret
// (client_secret_basic, or client_secret_post where the server takes only
// that), or with a private key (private_key_jwt, RFC 7523: a signed
// assertion whose iss and sub are the client id and whose audience is the
// authorization server's issuer).
type ClientCredentials struct {
	ClientID     string
	ClientSecret string
	// PrivateKey, if set, authenticates with private_key_jwt instead of
	// the secret; see ParsePrivateKey and LoadPrivateKey.
	PrivateKey crypto.Signer
	// SigningAlg is the assertion's algorithm; "" means the key's own
	// (ES256 for a P-256 key, RS256 for RSA, EdDSA for Ed25519).
	SigningAlg string
	// KeyID is the assertion header's kid, for a server that keeps
	// several keys of the client.
	KeyID string
}

func (cc *ClientCredentials) clientID() string { return cc.ClientID }

func (cc *ClientCredentials) method() string {
	if cc.PrivateKey != nil {
		return "client credentials (private_key_jwt)"
	}
	return "client credentials (client secret)"
}

func (cc *ClientCredentials) obtain(ctx context.Context, c *Client, g *grant) (*oauth2.Token, error) {
	conf := &clientcredentials.Config{
		ClientID:       cc.ClientID,
		TokenURL:       g.md.TokenEndpoint,
		Scopes:         g.scopes,
		EndpointParams: url.Values{"resource": {g.resource}},
	}
	sign, err := clientAuth(conf, g.md, cc.ClientSecret, cc.PrivateKey, cc.SigningAlg, cc.KeyID, g.issuer)
	if err != nil {
		return nil, err
	}
	return fetch(c.tokenContext(withSigner(ctx, sign), g), conf)
}

// signerKey carries, in a token request's ctx, what signs a fresh client
// assertion: a request sent again (after use_dpop_nonce) must not replay
// the one it carried, as providers refuse an assertion's jti seen before.
type signerKey struct{}

func withSigner(ctx context.Context, sign func() (string, error)) context.Context {
	if sign == nil {
		return ctx
	}
	return context.WithValue(ctx, signerKey{}, sign)
}

// freshAssertion replaces the client_assertion of the form body with a new
// one, when the request's ctx can sign one; otherwise body is kept.
func freshAssertion(ctx context.Context, body []byte) ([]byte, error) {
	sign, _ := ctx.Value(signerKey{}).(func() (string, error))
	if sign == nil {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("client_assertion") == "" {
		return body, nil
	}
	assertion, err := sign()
	if err != nil {
		return nil, err
	}
	form.Set("client_assertion", assertion)
	return []byte(form.Encode()), nil
}

// clientAuth sets how conf authenticates at the token endpoint: a
// private key assertion, a secret as the server prefers, or none. For an
// assertion it returns what signs a new one (see withSigner).
func clientAuth(conf *clientcredentials.Config, md *serverMetadata, secret string, key crypto.Signer, alg, kid, audience string) (sign func() (string, error), err error) {
	switch {
	case key != nil:
		sign = func() (string, error) {
			now := time.Now()
			header := map[string]any{"typ": "JWT"}
			if kid != "" {
				header["kid"] = kid
			}
			return signJWT(key, alg, header, map[string]any{
				"iss": conf.ClientID, "sub": conf.ClientID, "aud": audience,
				"jti": randomString(), "iat": now.Unix(), "exp": now.Add(assertionLifetime).Unix(),
			})
		}
		assertion, err := sign()
		if err != nil {
			return nil, err
		}
		conf.EndpointParams.Set("client_assertion_type", assertionTypeJWT)
		conf.EndpointParams.Set("client_assertion", assertion)
		conf.AuthStyle = oauth2.AuthStyleInParams
	case secret != "":
		conf.ClientSecret = secret
		conf.AuthStyle = oauth2.AuthStyleInHeader
		if secretMethod(md, true) == "client_secret_post" {
			conf.AuthStyle = oauth2.AuthStyleInParams
		}
	default:
		conf.AuthStyle = oauth2.AuthStyleInParams
	}
	return sign, nil
}

// fetch makes one token request; its error is an *AuthorizationError when
// the server answered with one, and never quotes the answer's body.
func fetch(ctx context.Context, conf *clientcredentials.Config) (*oauth2.Token, error) {
	tok, err := conf.Token(ctx)
	if err != nil {
		return nil, tokenError(err)
	}
	return tok, nil
}

// JWTBearer is the JWT bearer grant (RFC 7523) of a workload that holds a
// token from its platform (a Kubernetes service account token, a cloud
// workload identity): the token is the grant's assertion, read anew at
// each use. A failure is returned as the server gave it (invalid_grant,
// invalid_scope, unauthorized_client), without retrying or trying another
// grant.
type JWTBearer struct {
	// ClientID is sent as client_id when set; ClientSecret authenticates
	// the client when the server asks for it.
	ClientID     string
	ClientSecret string
	// Assertion returns the platform's token; AssertionFile, if Assertion
	// is nil, is the file that holds it (read each time, at most 64 KiB).
	Assertion     func(ctx context.Context) (string, error)
	AssertionFile string
}

func (jb *JWTBearer) method() string   { return "JWT bearer (workload identity)" }
func (jb *JWTBearer) clientID() string { return jb.ClientID }

func (jb *JWTBearer) obtain(ctx context.Context, c *Client, g *grant) (*oauth2.Token, error) {
	assertion, err := readToken(ctx, jb.Assertion, jb.AssertionFile, "workload token")
	if err != nil {
		return nil, err
	}
	conf := &clientcredentials.Config{
		ClientID: jb.ClientID,
		TokenURL: g.md.TokenEndpoint,
		Scopes:   g.scopes,
		EndpointParams: url.Values{
			"grant_type": {grantJWTBearer},
			"assertion":  {assertion},
			"resource":   {g.resource},
		},
	}
	if _, err := clientAuth(conf, g.md, jb.ClientSecret, nil, "", "", ""); err != nil {
		return nil, err
	}
	return fetch(c.tokenContext(ctx, g), conf)
}

// readToken gets a token from f, else from file.
func readToken(ctx context.Context, f func(context.Context) (string, error), file, what string) (string, error) {
	if f != nil {
		t, err := f(ctx)
		if err != nil {
			return "", fmt.Errorf("mcp: auth: %s: %w", what, err)
		}
		return strings.TrimSpace(t), nil
	}
	if file == "" {
		return "", fmt.Errorf("mcp: auth: no %s (a function or a file)", what)
	}
	fh, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("mcp: auth: %s: %w", what, err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, 64<<10+1))
	if err != nil {
		return "", fmt.Errorf("mcp: auth: %s: %w", what, err)
	}
	if len(b) > 64<<10 {
		return "", fmt.Errorf("mcp: auth: %s in %s is larger than 64 KiB", what, file)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("mcp: auth: %s file %s is empty", what, file)
	}
	return t, nil
}

// EnterpriseManaged is enterprise-managed authorization (the MCP
// extension): the user's identity assertion from the enterprise identity
// provider (an OpenID Connect ID token from single sign-on) is exchanged
// there (RFC 8693 token exchange) for an identity assertion authorization
// grant (ID-JAG) for the MCP server's authorization server, which is then
// redeemed there with the JWT bearer grant (RFC 7523).
type EnterpriseManaged struct {
	// ClientID and ClientSecret are the client at the MCP server's
	// authorization server.
	ClientID     string
	ClientSecret string
	// IDPTokenEndpoint is the identity provider's token endpoint;
	// IDPClientID and IDPClientSecret authenticate there when set.
	IDPTokenEndpoint string
	IDPClientID      string
	IDPClientSecret  string
	// IDToken returns the user's identity assertion from the identity
	// provider; SubjectTokenType is its type ("" means an ID token,
	// urn:ietf:params:oauth:token-type:id_token).
	IDToken          func(ctx context.Context) (string, error)
	SubjectTokenType string
}

func (em *EnterpriseManaged) method() string   { return "enterprise-managed (ID-JAG)" }
func (em *EnterpriseManaged) clientID() string { return em.ClientID }

func (em *EnterpriseManaged) obtain(ctx context.Context, c *Client, g *grant) (*oauth2.Token, error) {
	if err := secure(em.IDPTokenEndpoint); err != nil {
		return nil, err
	}
	subject, err := readToken(ctx, em.IDToken, "", "identity assertion")
	if err != nil {
		return nil, err
	}
	subjectType := em.SubjectTokenType
	if subjectType == "" {
		subjectType = tokenTypeIDToken
	}
	exchange := &clientcredentials.Config{
		ClientID: em.IDPClientID,
		TokenURL: em.IDPTokenEndpoint,
		Scopes:   g.scopes,
		EndpointParams: url.Values{
			"grant_type":           {grantTokenExchange},
			"requested_token_type": {tokenTypeIDJAG},
			"audience":             {g.issuer},
			"resource":             {g.resource},
			"subject_token":        {subject},
			"subject_token_type":   {subjectType},
		},
	}
	if _, err := clientAuth(exchange, &serverMetadata{}, em.IDPClientSecret, nil, "", "", ""); err != nil {
		return nil, err
	}
	jag, err := fetch(context.WithValue(ctx, oauth2.HTTPClient, c.http()), exchange)
	if err != nil {
		var ae *AuthorizationError
		if errors.As(err, &ae) {
			ae.Endpoint = "identity provider token"
		}
		return nil, err
	}
	if t, _ := jag.Extra("issued_token_type").(string); t != tokenTypeIDJAG {
		return nil, &AuthorizationError{Endpoint: "identity provider token", Code: "invalid_response", Description: "the token exchange did not issue an ID-JAG"}
	}
	redeem := &clientcredentials.Config{
		ClientID: em.ClientID,
		TokenURL: g.md.TokenEndpoint,
		Scopes:   g.scopes,
		EndpointParams: url.Values{
			"grant_type": {grantJWTBearer},
			"assertion":  {jag.AccessToken},
			"resource":   {g.resource},
		},
	}
	if _, err := clientAuth(redeem, g.md, em.ClientSecret, nil, "", "", ""); err != nil {
		return nil, err
	}
	return fetch(c.tokenContext(ctx, g), redeem)
}
