package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcplug/mcplug/mcp/auth"
)

// grantSetup is a setup whose client obtains tokens with grant: no
// browser, no registration.
func grantSetup(t *testing.T, asConf func(*fakeAS), grant auth.Grant) *setup {
	s := newSetup(t, func(as *fakeAS) {
		as.noDCR = true
		if asConf != nil {
			asConf(as)
		}
	}, nil)
	s.cfg.Browser, s.cfg.Grant = nil, grant
	return s
}

func (s *setup) tokenRequests() []url.Values {
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	return append([]url.Values(nil), s.as.tokenForms...)
}

func TestClientCredentials(t *testing.T) {
	t.Run("with a secret, in the Basic header", func(t *testing.T) {
		var auth2 string
		s := grantSetup(t, func(as *fakeAS) {
			as.authMethods = []string{"client_secret_basic"}
			as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(f url.Values, h http.Header) ([]string, string) {
				auth2 = h.Get("Authorization")
				return nil, ""
			}}
		}, &auth.ClientCredentials{ClientID: "machine", ClientSecret: "s3cret"})
		require.NoError(t, s.call(t))
		id, secret, ok := (&http.Request{Header: http.Header{"Authorization": {auth2}}}).BasicAuth()
		require.True(t, ok)
		assert.Equal(t, "machine", id)
		assert.Equal(t, "s3cret", secret)
		form := s.tokenRequests()[0]
		assert.Equal(t, s.rs.url(), form.Get("resource"))
		assert.Empty(t, form.Get("client_secret"))
		assert.Zero(t, s.browser.n.Load())
	})
	t.Run("with a private key (private_key_jwt)", func(t *testing.T) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		var claims map[string]any
		s := grantSetup(t, func(as *fakeAS) {
			as.authMethods = []string{"private_key_jwt"}
			as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(f url.Values, h http.Header) ([]string, string) {
				if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
					return nil, "invalid_client"
				}
				var header map[string]any
				if _, err := verifyES256(f.Get("client_assertion"), &header, &claims, func() (*ecdsa.PublicKey, error) { return &key.PublicKey, nil }); err != nil {
					return nil, "invalid_client"
				}
				return strings.Fields(f.Get("scope")), ""
			}}
		}, &auth.ClientCredentials{ClientID: "machine", PrivateKey: key})
		require.NoError(t, s.call(t))
		assert.Equal(t, "machine", claims["iss"])
		assert.Equal(t, "machine", claims["sub"])
		assert.Equal(t, s.as.issuer(), claims["aud"], "the audience is the authorization server's issuer")
		assert.NotEmpty(t, claims["jti"])
		assert.Greater(t, claims["exp"], claims["iat"])
		assert.Empty(t, s.tokenRequests()[0].Get("client_secret"))
	})
	t.Run("a refused client gets the server's error, once", func(t *testing.T) {
		s := grantSetup(t, func(as *fakeAS) {
			as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(url.Values, http.Header) ([]string, string) {
				return nil, "invalid_client"
			}}
		}, &auth.ClientCredentials{ClientID: "machine", ClientSecret: "wrong"})
		var ae *auth.AuthorizationError
		require.ErrorAs(t, s.call(t), &ae)
		assert.Equal(t, "invalid_client", ae.Code)
		assert.NotContains(t, ae.Error(), "wrong", "the secret is never quoted")
		assert.Len(t, s.tokenRequests(), 1)
	})
}

func TestPrivateKeys(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})

	parsed, err := auth.ParsePrivateKey(pemBytes)
	require.NoError(t, err)
	assert.True(t, key.PublicKey.Equal(parsed.Public()))

	dir := t.TempDir()
	path := filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(path, pemBytes, 0o600))
	_, err = auth.LoadPrivateKey(path)
	require.NoError(t, err)

	require.NoError(t, os.Chmod(path, 0o644))
	_, err = auth.LoadPrivateKey(path)
	assert.ErrorContains(t, err, "chmod 600", "a key others may read is refused")

	_, err = auth.ParsePrivateKey([]byte("-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "c2VjcmV0", "the key is never quoted")
}

func TestJWTBearer(t *testing.T) {
	jwtBearer := "urn:ietf:params:oauth:grant-type:jwt-bearer"
	t.Run("the platform's token from a file, read at each use", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "token")
		require.NoError(t, os.WriteFile(file, []byte("workload-token-1\n"), 0o644))
		var seen []string
		s := grantSetup(t, func(as *fakeAS) {
			as.grants = map[string]func(url.Values, http.Header) ([]string, string){jwtBearer: func(f url.Values, h http.Header) ([]string, string) {
				seen = append(seen, f.Get("assertion"))
				return nil, ""
			}}
		}, &auth.JWTBearer{ClientID: "workload", AssertionFile: file})
		a := auth.New(s.cfg)
		require.NoError(t, s.callWith(t, a))
		require.NoError(t, os.WriteFile(file, []byte("workload-token-2"), 0o644)) // the platform rotates it
		s.as.revoke()
		require.NoError(t, s.callWith(t, a))
		assert.Equal(t, []string{"workload-token-1", "workload-token-2"}, seen)
		form := s.tokenRequests()[0]
		assert.Equal(t, "workload", form.Get("client_id"))
		assert.Equal(t, s.rs.url(), form.Get("resource"))
	})
	for _, code := range []string{"invalid_grant", "invalid_scope", "unauthorized_client"} {
		t.Run(code+" is returned without a retry or another grant", func(t *testing.T) {
			s := grantSetup(t, func(as *fakeAS) {
				as.grants = map[string]func(url.Values, http.Header) ([]string, string){jwtBearer: func(url.Values, http.Header) ([]string, string) {
					return nil, code // an expired assertion, a wrong audience, …
				}}
			}, &auth.JWTBearer{Assertion: func(context.Context) (string, error) { return "expired", nil }})
			var ae *auth.AuthorizationError
			require.ErrorAs(t, s.call(t), &ae)
			assert.Equal(t, code, ae.Code)
			reqs := s.tokenRequests()
			require.Len(t, reqs, 1)
			assert.Equal(t, jwtBearer, reqs[0].Get("grant_type"))
		})
	}
	t.Run("no token to give", func(t *testing.T) {
		s := grantSetup(t, nil, &auth.JWTBearer{AssertionFile: filepath.Join(t.TempDir(), "missing")})
		assert.ErrorContains(t, s.call(t), "workload token")
		assert.Empty(t, s.tokenRequests())
	})
}

// fakeIdP is an enterprise identity provider's token endpoint: it
// exchanges the user's ID token for an ID-JAG.
func fakeIdP(t *testing.T, issued string) (*httptest.Server, *[]url.Values) {
	var forms []url.Values
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		forms = append(forms, r.PostForm)
		if r.PostForm.Get("subject_token") != "user-id-token" {
			writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
			return
		}
		writeJSON(w, 200, map[string]any{"access_token": "id-jag-for-" + r.PostForm.Get("audience"), "issued_token_type": issued, "token_type": "N_A"})
	}))
	t.Cleanup(idp.Close)
	return idp, &forms
}

func TestEnterpriseManaged(t *testing.T) {
	jwtBearer := "urn:ietf:params:oauth:grant-type:jwt-bearer"
	setup := func(t *testing.T, issued string) (*setup, *[]url.Values, *atomic.Value) {
		idp, forms := fakeIdP(t, issued)
		var redeemed atomic.Value
		s := grantSetup(t, func(as *fakeAS) {
			as.authMethods = []string{"client_secret_basic"}
			as.grants = map[string]func(url.Values, http.Header) ([]string, string){jwtBearer: func(f url.Values, h http.Header) ([]string, string) {
				id, _, _ := (&http.Request{Header: h}).BasicAuth()
				redeemed.Store(id + " " + f.Get("assertion"))
				return nil, ""
			}}
		}, nil)
		s.cfg.Grant = &auth.EnterpriseManaged{
			ClientID: "chat-client", ClientSecret: "chat-secret",
			IDPTokenEndpoint: idp.URL + "/token", IDPClientID: "idp-client",
			IDToken: func(context.Context) (string, error) { return "user-id-token", nil },
		}
		return s, forms, &redeemed
	}
	t.Run("the ID token is exchanged for an ID-JAG, redeemed at the server's authorization server", func(t *testing.T) {
		s, forms, redeemed := setup(t, "urn:ietf:params:oauth:token-type:id-jag")
		require.NoError(t, s.call(t))
		require.Len(t, *forms, 1)
		x := (*forms)[0]
		assert.Equal(t, "urn:ietf:params:oauth:grant-type:token-exchange", x.Get("grant_type"))
		assert.Equal(t, "urn:ietf:params:oauth:token-type:id-jag", x.Get("requested_token_type"))
		assert.Equal(t, "urn:ietf:params:oauth:token-type:id_token", x.Get("subject_token_type"))
		assert.Equal(t, s.as.issuer(), x.Get("audience"))
		assert.Equal(t, s.rs.url(), x.Get("resource"))
		assert.Equal(t, "idp-client", x.Get("client_id"))
		assert.Equal(t, "chat-client id-jag-for-"+s.as.issuer(), redeemed.Load())
	})
	t.Run("an exchange that does not issue an ID-JAG stops there", func(t *testing.T) {
		s, _, redeemed := setup(t, "urn:ietf:params:oauth:token-type:access_token")
		var ae *auth.AuthorizationError
		require.ErrorAs(t, s.call(t), &ae)
		assert.Equal(t, "identity provider token", ae.Endpoint)
		assert.Nil(t, redeemed.Load())
	})
	t.Run("an identity provider on plain http elsewhere is refused", func(t *testing.T) {
		s, _, _ := setup(t, "")
		s.cfg.Grant.(*auth.EnterpriseManaged).IDPTokenEndpoint = "http://idp.example.com/token"
		assert.ErrorIs(t, s.call(t), auth.ErrInsecure)
	})
}

func TestDPoP(t *testing.T) {
	dpopSetup := func(t *testing.T, asNonce, rsNonce string) *setup {
		as := newFakeAS(t, func(as *fakeAS) { as.dpop, as.dpopNonce = true, asNonce })
		rs := newFakeRS(t, func() *fakeAS { return as }, func(rs *fakeRS) { rs.dpopNonce = rsNonce })
		s := newSetupFor(t, as, rs)
		s.cfg.DPoP = true
		return s
	}
	jtis := func(ps []proofClaims) map[string]bool {
		out := map[string]bool{}
		for _, p := range ps {
			out[p.JTI] = true
		}
		return out
	}
	t.Run("a bound token, presented with a fresh proof on every request", func(t *testing.T) {
		s := dpopSetup(t, "", "")
		a := auth.New(s.cfg)
		require.NoError(t, s.callWith(t, a))
		assert.Equal(t, "oauth: authorization code + DPoP", a.Method())
		s.rs.mu.Lock()
		proofs := append([]proofClaims(nil), s.rs.proofs...)
		s.rs.mu.Unlock()
		require.GreaterOrEqual(t, len(proofs), 3, "discover or initialize, then list and call")
		assert.Len(t, jtis(proofs), len(proofs), "no proof is replayed")
		s.as.mu.Lock()
		defer s.as.mu.Unlock()
		require.Len(t, s.as.proofs, 1)
		assert.Empty(t, s.as.proofs[0].ATH, "no token hash at the token endpoint")
	})
	t.Run("bound tokens work after a restart: the key is stored with them", func(t *testing.T) {
		s := dpopSetup(t, "", "")
		s.cfg.Store = &auth.MemoryStore{}
		require.NoError(t, s.callWith(t, auth.New(s.cfg)))
		require.NoError(t, s.callWith(t, auth.New(s.cfg)), "a new Client (a restart) with the same store")
		assert.EqualValues(t, 1, s.browser.n.Load(), "no second sign-in")
	})
	t.Run("a stored bound token without its key is never sent", func(t *testing.T) {
		s := dpopSetup(t, "", "")
		store := &keyedStore{}
		s.cfg.Store = store
		require.NoError(t, s.callWith(t, auth.New(s.cfg)))
		ctx := context.Background()
		for _, key := range store.keys { // a store written before keys were kept
			b, err := store.Load(ctx, key)
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(b, &m))
			if _, ok := m["dpop_key"]; ok {
				delete(m, "dpop_key")
				b, _ = json.Marshal(m)
				require.NoError(t, store.Save(ctx, key, b))
			}
		}
		require.NoError(t, s.callWith(t, auth.New(s.cfg)))
		assert.EqualValues(t, 2, s.browser.n.Load(), "signed in again instead")
		s.rs.mu.Lock()
		defer s.rs.mu.Unlock()
		assert.Zero(t, s.rs.badProofs, "a bound token went with a key it is not bound to")
	})
	t.Run("server nonces are honoured, once each", func(t *testing.T) {
		s := dpopSetup(t, "as-nonce", "rs-nonce")
		require.NoError(t, s.call(t))
		s.as.mu.Lock()
		asProofs := append([]proofClaims(nil), s.as.proofs...)
		s.as.mu.Unlock()
		require.Len(t, asProofs, 2, "the token request, then again with the nonce")
		assert.Equal(t, "as-nonce", asProofs[1].Nonce)
		s.rs.mu.Lock()
		defer s.rs.mu.Unlock()
		assert.Equal(t, "rs-nonce", s.rs.proofs[len(s.rs.proofs)-1].Nonce)
		assert.Len(t, jtis(s.rs.proofs), len(s.rs.proofs), "a retry with the nonce is a new proof")
	})
	t.Run("an authorization server that keeps asking for nonces fails the sign-in, bounded", func(t *testing.T) {
		s := dpopSetup(t, "loop", "")
		err := s.call(t)
		var ae *auth.AuthorizationError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "use_dpop_nonce", ae.Code)
		s.as.mu.Lock()
		defer s.as.mu.Unlock()
		assert.Len(t, s.as.proofs, 3, "the request and two retries")
	})
	t.Run("an MCP server that keeps asking for nonces fails the request, bounded", func(t *testing.T) {
		s := dpopSetup(t, "", "loop")
		err := s.call(t)
		require.Error(t, err)
		s.rs.mu.Lock()
		defer s.rs.mu.Unlock()
		assert.LessOrEqual(t, len(s.rs.proofs), 3)
	})
	t.Run("without DPoP at the authorization server, bearer tokens", func(t *testing.T) {
		s := newSetup(t, nil, nil)
		s.cfg.DPoP = true
		require.NoError(t, s.call(t))
		for _, tok := range s.rs.tokens() {
			assert.NotContains(t, tok, " ")
		}
	})
	t.Run("with a machine grant too", func(t *testing.T) {
		s := dpopSetup(t, "", "")
		s.as.mu.Lock()
		s.as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(url.Values, http.Header) ([]string, string) { return nil, "" }}
		s.as.mu.Unlock()
		s.cfg.Browser, s.cfg.Grant = nil, &auth.ClientCredentials{ClientID: "m", ClientSecret: "s"}
		require.NoError(t, s.call(t))
		s.rs.mu.Lock()
		defer s.rs.mu.Unlock()
		assert.NotEmpty(t, s.rs.proofs)
	})
}

func TestMethod(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for grant, want := range map[auth.Grant]string{
		nil:                                      "oauth: authorization code",
		&auth.ClientCredentials{}:                "oauth: client credentials (client secret)",
		&auth.ClientCredentials{PrivateKey: key}: "oauth: client credentials (private_key_jwt)",
		&auth.JWTBearer{}:                        "oauth: JWT bearer (workload identity)",
		&auth.EnterpriseManaged{}:                "oauth: enterprise-managed (ID-JAG)",
	} {
		assert.Equal(t, want, auth.New(&auth.Config{Grant: grant}).Method())
	}
}

// A grant's credentials are bound to the configured issuer: a server that
// names another authorization server gets nothing sent there.
func TestGrantCredentialsAreBoundToTheIssuer(t *testing.T) {
	for _, bound := range []bool{true, false} {
		name := "bound to another issuer: refused before any request"
		if !bound {
			name = "bound to the server's issuer: used"
		}
		t.Run(name, func(t *testing.T) {
			s := grantSetup(t, func(as *fakeAS) {
				as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(url.Values, http.Header) ([]string, string) {
					return nil, ""
				}}
			}, &auth.ClientCredentials{ClientID: "machine", ClientSecret: "s3cret"})
			s.cfg.Issuer = s.as.issuer()
			if bound {
				s.cfg.Issuer = "https://login.example.com"
			}
			err := s.call(t)
			if !bound {
				require.NoError(t, err)
				assert.Len(t, s.tokenRequests(), 1)
				return
			}
			var mismatch *auth.IssuerMismatchError
			require.ErrorAs(t, err, &mismatch)
			assert.Equal(t, "https://login.example.com", mismatch.Want)
			assert.Empty(t, s.tokenRequests(), "the secret was sent to the server's authorization server")
		})
	}
}

// A token request sent again for a DPoP nonce signs a fresh client
// assertion: providers refuse one whose jti they saw ("client assertion
// tokens must only be used once").
func TestDPoPNonceRetrySignsAFreshAssertion(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	var jtis []string
	s := grantSetup(t, func(as *fakeAS) {
		as.dpop, as.dpopNonce = true, "n-1"
		as.authMethods = []string{"private_key_jwt"}
		as.onToken = func(f url.Values) {
			var header, claims map[string]any
			if _, err := verifyES256(f.Get("client_assertion"), &header, &claims, func() (*ecdsa.PublicKey, error) { return &key.PublicKey, nil }); err == nil {
				jtis = append(jtis, claims["jti"].(string))
			}
		}
		as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(url.Values, http.Header) ([]string, string) {
			return nil, ""
		}}
	}, &auth.ClientCredentials{ClientID: "machine", PrivateKey: key})
	s.cfg.DPoP = true
	require.NoError(t, s.call(t))
	s.as.mu.Lock()
	defer s.as.mu.Unlock()
	require.Len(t, jtis, 2, "the request refused for its nonce, then the one sent again")
	assert.NotEqual(t, jtis[0], jtis[1], "the client assertion was replayed")
}

// keyedStore is a MemoryStore that remembers the keys saved.
type keyedStore struct {
	auth.MemoryStore
	mu   sync.Mutex
	keys []string
}

func (s *keyedStore) Save(ctx context.Context, key string, value []byte) error {
	s.mu.Lock()
	if !slices.Contains(s.keys, key) {
		s.keys = append(s.keys, key)
	}
	s.mu.Unlock()
	return s.MemoryStore.Save(ctx, key, value)
}

func TestGrantTokensAreStored(t *testing.T) {
	machine := func(id string) auth.Grant { return &auth.ClientCredentials{ClientID: id, ClientSecret: "s3cret"} }
	s := grantSetup(t, func(as *fakeAS) {
		as.authMethods = []string{"client_secret_basic"}
		as.grants = map[string]func(url.Values, http.Header) ([]string, string){"client_credentials": func(url.Values, http.Header) ([]string, string) { return nil, "" }}
	}, machine("machine"))
	s.cfg.Store = &auth.MemoryStore{}
	require.NoError(t, s.call(t))
	require.Len(t, s.tokenRequests(), 1)

	require.NoError(t, s.call(t), "a new Client on the same store")
	assert.Len(t, s.tokenRequests(), 1, "the stored token is used after a restart")

	other := *s.cfg
	other.Grant = machine("other-machine")
	require.NoError(t, s.callWith(t, auth.New(&other)))
	assert.Len(t, s.tokenRequests(), 2, "another client's token is its own")
}
