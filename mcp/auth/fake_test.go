package auth_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcplug/mcplug/mcp/mcptest"
)

// cleaner is a *testing.T, or cleanups in an Example.
type cleaner interface{ Cleanup(func()) }

// cleanups run, last first, at run.
type cleanups []func()

func (c *cleanups) Cleanup(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
}

// fakeAS is an authorization server for tests: metadata, dynamic
// registration, an authorization endpoint that redirects at once, and a
// token endpoint for codes and refresh tokens. Its fields are set before
// use; what clients sent is recorded.
type fakeAS struct {
	srv  *httptest.Server
	path string // the issuer's path, "" or like "/tenant1"

	scopesSupported []string
	authMethods     []string // token_endpoint_auth_methods_supported; nil means ["none"]
	noPKCE          bool
	noDCR           bool
	cimd            bool
	issSupported    *bool                       // nil leaves the field out
	issMode         string                      // "" correct, "omit", "wrong", "slash"
	issuerOverride  string                      // the metadata's issuer, when set
	openID          bool                        // publishes OpenID Connect discovery fields
	expiresIn       int                         // 0 means 3600
	refresh         bool                        // issue refresh tokens
	failRefresh     bool                        // refresh requests fail with invalid_grant
	regAnswer       map[string]any              // merged into registration answers
	strictClients   bool                        // only registered clients are known (see forget)
	known           map[string]bool             // the registered clients, when strictClients
	onToken         func(url.Values)            // sees each token request's form
	deny            string                      // a scope never granted
	override        map[string]http.HandlerFunc // by path, served instead
	// grants serve other grant types: the scopes granted, or an error code.
	grants    map[string]func(form url.Values, h http.Header) ([]string, string)
	dpop      bool              // advertise DPoP (ES256), require a proof at the token endpoint, bind tokens
	dpopNonce string            // a nonce the token endpoint requires; "loop" asks for a new one each time
	jkts      map[string]string // access token -> the thumbprint of its key
	proofs    []proofClaims     // the token endpoint's proofs

	mu            sync.Mutex
	auths         []url.Values
	tokenForms    []url.Values
	tokenHeaders  []http.Header
	registrations []map[string]any
	challenges    map[string]string   // code -> code_challenge
	tokens        map[string][]string // access token -> scopes
	refreshTokens map[string][]string
	n             int
}

func newFakeAS(t cleaner, configure func(*fakeAS)) *fakeAS {
	as := &fakeAS{challenges: map[string]string{}, tokens: map[string][]string{}, refreshTokens: map[string][]string{}}
	if configure != nil {
		configure(as)
	}
	as.srv = httptest.NewServer(as)
	t.Cleanup(as.srv.Close)
	return as
}

func (as *fakeAS) issuer() string { return as.srv.URL + as.path }

func (as *fakeAS) metadata() map[string]any {
	methods := as.authMethods
	if methods == nil {
		methods = []string{"none"}
	}
	md := map[string]any{
		"issuer":                                as.issuer(),
		"authorization_endpoint":                as.srv.URL + "/authorize",
		"token_endpoint":                        as.srv.URL + "/token",
		"response_types_supported":              []string{"code"},
		"token_endpoint_auth_methods_supported": methods,
	}
	if as.issuerOverride != "" {
		md["issuer"] = as.issuerOverride
	}
	if !as.noPKCE {
		md["code_challenge_methods_supported"] = []string{"S256"}
	}
	if !as.noDCR {
		md["registration_endpoint"] = as.srv.URL + "/register"
	}
	if as.scopesSupported != nil {
		md["scopes_supported"] = as.scopesSupported
	}
	if as.cimd {
		md["client_id_metadata_document_supported"] = true
	}
	if as.issSupported != nil {
		md["authorization_response_iss_parameter_supported"] = *as.issSupported
	}
	if as.dpop {
		md["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if as.openID {
		md["subject_types_supported"] = []string{"public"}
		md["id_token_signing_alg_values_supported"] = []string{"RS256"}
	}
	return md
}

func (as *fakeAS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := as.override[r.URL.Path]; h != nil {
		h(w, r)
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/.well-known/oauth-authorization-server"+as.path:
		writeJSON(w, 200, as.metadata())
	case r.Method == http.MethodPost && r.URL.Path == "/register" && !as.noDCR:
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		as.registrations = append(as.registrations, body)
		as.n++
		ans := map[string]any{"client_id": fmt.Sprintf("client-%d", as.n), "client_secret": "secret", "redirect_uris": body["redirect_uris"]}
		if as.known == nil {
			as.known = map[string]bool{}
		}
		as.known[ans["client_id"].(string)] = true
		for k, v := range as.regAnswer {
			ans[k] = v
		}
		writeJSON(w, 201, ans)
	case r.Method == http.MethodGet && r.URL.Path == "/authorize" && as.strictClients && !as.known[r.URL.Query().Get("client_id")]:
		http.Error(w, "unknown client", http.StatusBadRequest) // a page, no redirect: the client cannot be trusted with one
	case r.Method == http.MethodPost && r.URL.Path == "/token" && as.strictClients && !as.known[clientOf(r)]:
		writeJSON(w, 401, map[string]any{"error": "invalid_client"})
	case r.Method == http.MethodGet && r.URL.Path == "/authorize":
		q := r.URL.Query()
		as.auths = append(as.auths, q)
		as.n++
		code := fmt.Sprintf("code-%d", as.n)
		as.challenges[code] = q.Get("code_challenge") + " " + q.Get("scope")
		back, _ := url.Parse(q.Get("redirect_uri"))
		v := back.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		switch as.issMode {
		case "":
			v.Set("iss", as.issuer())
		case "wrong":
			v.Set("iss", "https://evil.example.com")
		case "slash":
			v.Set("iss", as.issuer()+"/")
		}
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case r.Method == http.MethodPost && r.URL.Path == "/token":
		r.ParseForm()
		as.tokenForms = append(as.tokenForms, r.PostForm)
		as.tokenHeaders = append(as.tokenHeaders, r.Header.Clone())
		if as.onToken != nil {
			as.onToken(r.PostForm)
		}
		var jkt string
		if as.dpop {
			p, err := checkProof(r.Header.Get("DPoP"), "POST", as.srv.URL+"/token", "")
			if err != nil {
				writeJSON(w, 400, map[string]any{"error": "invalid_dpop_proof", "error_description": err.Error()})
				return
			}
			as.proofs = append(as.proofs, p)
			if as.dpopNonce != "" {
				want := as.dpopNonce
				if want == "loop" {
					want = fmt.Sprintf("nonce-%d", len(as.proofs))
				}
				if p.Nonce != want || as.dpopNonce == "loop" {
					w.Header().Set("DPoP-Nonce", want)
					writeJSON(w, 400, map[string]any{"error": "use_dpop_nonce"})
					return
				}
			}
			jkt = p.jkt
		}
		var scopes []string
		switch gt := r.PostForm.Get("grant_type"); gt {
		case "authorization_code":
			ch, ok := as.challenges[r.PostForm.Get("code")]
			challenge, scope, _ := strings.Cut(ch, " ")
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
				writeJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "bad code or verifier"})
				return
			}
			delete(as.challenges, r.PostForm.Get("code"))
			scopes = slices.DeleteFunc(strings.Fields(scope), func(s string) bool { return s == as.deny })
		case "refresh_token":
			s, ok := as.refreshTokens[r.PostForm.Get("refresh_token")]
			if !ok || as.failRefresh {
				writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			scopes = s
		default:
			h := as.grants[gt]
			if h == nil {
				writeJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
				return
			}
			granted, errCode := h(r.PostForm, r.Header)
			if errCode != "" {
				writeJSON(w, 400, map[string]any{"error": errCode})
				return
			}
			scopes = granted
		}
		as.n++
		tok := fmt.Sprintf("token-%d", as.n)
		as.tokens[tok] = scopes
		if jkt != "" {
			if as.jkts == nil {
				as.jkts = map[string]string{}
			}
			as.jkts[tok] = jkt
		}
		exp := as.expiresIn
		if exp == 0 {
			exp = 3600
		}
		ans := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": exp, "scope": strings.Join(scopes, " ")}
		if jkt != "" {
			ans["token_type"] = "DPoP"
		}
		if as.refresh {
			rt := fmt.Sprintf("refresh-%d", as.n)
			as.refreshTokens[rt] = scopes
			ans["refresh_token"] = rt
		}
		writeJSON(w, 200, ans)
	default:
		http.NotFound(w, r)
	}
}

// clientOf is the client a token request names: in its Basic
// credentials or its form.
func clientOf(r *http.Request) string {
	if id, _, ok := r.BasicAuth(); ok {
		return id
	}
	r.ParseForm()
	return r.PostForm.Get("client_id")
}

// forget is a restart of a server that keeps everything in memory: its
// registrations, tokens and refresh tokens are gone.
func (as *fakeAS) forget() {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.known = nil
	as.tokens = map[string][]string{}
	as.refreshTokens = map[string][]string{}
}

// valid returns the scopes of an access token the server issued.
func (as *fakeAS) valid(token string) ([]string, bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	s, ok := as.tokens[token]
	return s, ok
}

// boundTo is the key thumbprint a token is bound to ("" for a bearer
// token).
func (as *fakeAS) boundTo(token string) string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.jkts[token]
}

func (as *fakeAS) revoke() {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.tokens = map[string][]string{}
}

func (as *fakeAS) counts() (auths, tokens, registrations int) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return len(as.auths), len(as.tokenForms), len(as.registrations)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// fakeRS is an MCP server (an mcptest.Server at /mcp) behind Bearer
// tokens of an authorization server, with its protected resource
// metadata.
type fakeRS struct {
	srv *httptest.Server
	as  func() *fakeAS // the authorization server it trusts now

	prmPath         string // "" means /.well-known/oauth-protected-resource/mcp; "-" means none
	inHeader        bool   // put resource_metadata in the challenge
	resource        string // the metadata's resource; "" means the server's URL
	scopesSupported []string
	challengeScope  string                       // scope in the 401 challenge
	needs           func(method string) []string // scopes a method needs (403 otherwise)
	dpopNonce       string                       // a nonce DPoP proofs must carry; "loop" a new one each time

	proofs []proofClaims // DPoP proofs seen
	nonceN int
	// badProofs counts requests whose bound token came without a proof of
	// its key.
	badProofs int

	mu         sync.Mutex
	seenTokens []string
}

func newFakeRS(t cleaner, as func() *fakeAS, configure func(*fakeRS)) *fakeRS {
	rs := &fakeRS{as: as, inHeader: true}
	if configure != nil {
		configure(rs)
	}
	mcp := &mcptest.Server{}
	mux := http.NewServeMux()
	prm := rs.prmPath
	if prm == "" {
		prm = "/.well-known/oauth-protected-resource/mcp"
	}
	if prm != "-" {
		mux.HandleFunc("GET "+prm, func(w http.ResponseWriter, r *http.Request) {
			res := rs.resource
			if res == "" {
				res = rs.srv.URL + "/mcp"
			}
			md := map[string]any{"resource": res, "authorization_servers": []string{rs.as().issuer()}}
			if rs.scopesSupported != nil {
				md["scopes_supported"] = rs.scopesSupported
			}
			writeJSON(w, 200, md)
		})
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		challenge := "Bearer"
		var params []string
		if rs.inHeader && prm != "-" {
			params = append(params, fmt.Sprintf("resource_metadata=%q", rs.srv.URL+prm))
		}
		if rs.challengeScope != "" {
			params = append(params, fmt.Sprintf("scope=%q", rs.challengeScope))
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		ok := scheme == "Bearer" || scheme == "DPoP"
		rs.mu.Lock()
		rs.seenTokens = append(rs.seenTokens, token)
		rs.mu.Unlock()
		scopes, valid := rs.as().valid(token)
		if jkt := rs.as().boundTo(token); valid && jkt != "" {
			p, err := checkProof(r.Header.Get("DPoP"), r.Method, rs.url(), token)
			if scheme != "DPoP" || err != nil || p.jkt != jkt {
				rs.mu.Lock()
				rs.badProofs++
				rs.mu.Unlock()
				w.Header().Set("WWW-Authenticate", `DPoP error="invalid_token"`)
				writeJSON(w, 401, map[string]any{"error": "invalid_token"})
				return
			}
			rs.mu.Lock()
			rs.proofs = append(rs.proofs, p)
			want := rs.dpopNonce
			if want == "loop" {
				rs.nonceN++
				want = fmt.Sprintf("rs-nonce-%d", rs.nonceN)
			}
			rs.mu.Unlock()
			if want != "" && (p.Nonce != want || rs.dpopNonce == "loop") {
				w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
				w.Header().Set("DPoP-Nonce", want)
				writeJSON(w, 401, map[string]any{"error": "use_dpop_nonce"})
				return
			}
		} else if valid && scheme != "Bearer" {
			valid = false
		}
		if !ok || !valid {
			w.Header().Set("WWW-Authenticate", challenge+" "+strings.Join(params, ", "))
			writeJSON(w, 401, map[string]any{"error": "invalid_token"})
			return
		}
		if rs.needs != nil && r.Method == http.MethodPost {
			var m struct{ Method string }
			body, _ := readBody(r)
			json.Unmarshal(body, &m)
			need := rs.needs(m.Method)
			for _, s := range need {
				if !slices.Contains(scopes, s) {
					p := append(slices.Clone(params[:min(len(params), 1)]), `error="insufficient_scope"`, fmt.Sprintf("scope=%q", strings.Join(need, " ")))
					w.Header().Set("WWW-Authenticate", challenge+" "+strings.Join(p, ", "))
					writeJSON(w, 403, map[string]any{"error": "insufficient_scope"})
					return
				}
			}
		}
		mcp.ServeHTTP(w, r)
	})
	rs.srv = httptest.NewServer(mux)
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *fakeRS) url() string { return rs.srv.URL + "/mcp" }

func (rs *fakeRS) tokens() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.seenTokens)
}

func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}

// proofClaims are the claims of a DPoP proof, and the thumbprint of its
// key.
type proofClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath"`
	Nonce string `json:"nonce"`
	jkt   string
}

// checkProof verifies a DPoP proof as a server does (RFC 9449 section
// 4.3): typ, an ES256 signature by the jwk of its header, the method, the
// URL, the time and, with an access token, its hash.
func checkProof(proof, method, u, accessToken string) (proofClaims, error) {
	var p proofClaims
	if proof == "" {
		return p, errors.New("no DPoP proof")
	}
	var header struct {
		Typ string         `json:"typ"`
		Alg string         `json:"alg"`
		JWK map[string]any `json:"jwk"`
	}
	pub, err := verifyES256(proof, &header, &p, func() (*ecdsa.PublicKey, error) { return jwkKey(header.JWK) })
	if err != nil {
		return p, err
	}
	if header.Typ != "dpop+jwt" || header.Alg != "ES256" {
		return p, fmt.Errorf("typ %q alg %q", header.Typ, header.Alg)
	}
	if _, private := header.JWK["d"]; private {
		return p, errors.New("private key in the proof")
	}
	if p.HTM != method || p.HTU != u || p.JTI == "" {
		return p, fmt.Errorf("htm %q htu %q", p.HTM, p.HTU)
	}
	if d := time.Now().Unix() - p.IAT; d > 60 || d < -60 {
		return p, errors.New("iat out of range")
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if p.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return p, errors.New("ath does not match")
		}
	}
	thumb, _ := json.Marshal(map[string]any{"crv": header.JWK["crv"], "kty": header.JWK["kty"], "x": header.JWK["x"], "y": header.JWK["y"]})
	sum := sha256.Sum256(thumb)
	p.jkt = base64.RawURLEncoding.EncodeToString(sum[:])
	_ = pub
	return p, nil
}

// verifyES256 decodes a compact JWS into header and claims and checks its
// ES256 signature with the key key returns (called after the header is
// decoded).
func verifyES256(jws string, header, claims any, key func() (*ecdsa.PublicKey, error)) (*ecdsa.PublicKey, error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWS")
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	if err := errors.Join(json.Unmarshal(hb, header), json.Unmarshal(cb, claims)); err != nil {
		return nil, err
	}
	pub, err := key()
	if err != nil {
		return nil, err
	}
	if len(sig) != 64 {
		return nil, fmt.Errorf("signature of %d bytes", len(sig))
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("bad signature")
	}
	return pub, nil
}

func jwkKey(jwk map[string]any) (*ecdsa.PublicKey, error) {
	if jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
		return nil, errors.New("not a P-256 key")
	}
	x, err1 := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["x"]))
	y, err2 := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["y"]))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if len(x) != 32 || len(y) != 32 {
		return nil, errors.New("not a P-256 point")
	}
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
}
