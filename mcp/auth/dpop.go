package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// DPoP (RFC 9449): with Config.DPoP, a Client asks for tokens bound to a
// key of its own, where the authorization server supports DPoP with ES256,
// and proves it holds the key with a fresh proof on every token request and
// every request that carries such a token. A server nonce (DPoP-Nonce) is
// honoured: the request goes once more with it.

// maxNonceRetries bounds how often one token request goes again with a new
// nonce; a server that keeps asking fails the request.
const maxNonceRetries = 2

// dpopKey is a Client's proof-of-possession key and the nonces servers
// gave it, by origin.
type dpopKey struct {
	key *ecdsa.PrivateKey
	jwk map[string]any

	mu     sync.Mutex
	nonces map[string]string
}

func newDPoPKey() *dpopKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return &dpopKey{key: key, jwk: publicJWK(key), nonces: map[string]string{}}
}

// supported reports whether the authorization server takes DPoP proofs
// signed with ES256.
func (md *serverMetadata) dpopES256() bool {
	return slices.Contains(md.DPoPSigningAlgValuesSupported, "ES256")
}

// proof is a DPoP proof for a request: its method and URL (without query
// or fragment), a new jti, the time, the nonce the server gave, and for a
// request that carries an access token, the token's hash.
func (d *dpopKey) proof(method string, u *url.URL, accessToken string) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment = "", "", ""
	claims := map[string]any{
		"jti": randomString(),
		"htm": method,
		"htu": htu.String(),
		"iat": time.Now().Unix(),
	}
	if n := d.nonce(u); n != "" {
		claims["nonce"] = n
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	key, jwk := d.current()
	return signJWT(key, "ES256", map[string]any{"typ": "dpop+jwt", "jwk": jwk}, claims)
}

// current is the key proofs are signed with, and its public JWK.
func (d *dpopKey) current() (*ecdsa.PrivateKey, map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.key, d.jwk
}

// use makes key the one proofs are signed with: the key a stored token is
// bound to, after a restart.
func (d *dpopKey) use(key *ecdsa.PrivateKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.key, d.jwk = key, publicJWK(key)
}

// marshal is the private key as the Store keeps it beside the tokens bound
// to it: PKCS #8, base64.
func (d *dpopKey) marshal() string {
	key, _ := d.current()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(der)
}

// parseDPoPKey reads a key marshal wrote.
func parseDPoPKey(s string) (*ecdsa.PrivateKey, error) {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, errors.New("not a P-256 key")
	}
	return key, nil
}

func (d *dpopKey) nonce(u *url.URL) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[originOf(u)]
}

// takeNonce keeps the DPoP-Nonce of an answer from u's origin, and reports
// whether it is one the client did not have.
func (d *dpopKey) takeNonce(u *url.URL, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" || len(n) > 1024 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o := originOf(u)
	if d.nonces[o] == n {
		return false
	}
	d.nonces[o] = n
	return true
}

// dpopTransport adds a DPoP proof to token requests, and sends a request
// again when the authorization server asks for a nonce (use_dpop_nonce).
type dpopTransport struct {
	base http.RoundTripper
	key  *dpopKey
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 && body != nil {
			var err error
			if body, err = freshAssertion(req.Context(), body); err != nil {
				return nil, err
			}
		}
		proof, err := t.key.proof(req.Method, req.URL, "")
		if err != nil {
			return nil, err
		}
		r := req.Clone(req.Context())
		r.Header.Set("DPoP", proof)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		fresh := t.key.takeNonce(req.URL, resp.Header)
		if resp.StatusCode != http.StatusBadRequest || !fresh || attempt == maxNonceRetries {
			return resp, nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error != "use_dpop_nonce" {
			resp.Body = io.NopCloser(bytes.NewReader(b))
			return resp, nil
		}
	}
}

// dpopChallenge reports whether a 401 asks for a DPoP nonce.
func dpopChallenge(h http.Header) bool {
	for _, v := range h.Values("Www-Authenticate") {
		for _, ch := range splitChallenges(v) {
			if strings.EqualFold(ch.scheme, "DPoP") && ch.params["error"] == "use_dpop_nonce" {
				return true
			}
		}
	}
	return false
}
