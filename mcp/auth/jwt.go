package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
)

// This file signs the JWTs a client sends (client assertions, DPoP
// proofs): JWS compact serialization with ES256/384/512, RS256, PS256 or
// EdDSA. A client only signs; it never verifies a JWT.

// ParsePrivateKey reads a PEM private key (PKCS #8, SEC 1 "EC PRIVATE
// KEY" or PKCS #1 "RSA PRIVATE KEY"): ECDSA P-256/384/521, RSA or
// Ed25519. Errors never quote the key.
func ParsePrivateKey(pemBytes []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("mcp: auth: the private key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, errors.New("mcp: auth: the private key cannot be parsed (want PKCS #8, SEC 1 or PKCS #1)")
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("mcp: auth: the private key cannot sign")
	}
	if _, err := signingAlg(signer, ""); err != nil {
		return nil, err
	}
	return signer, nil
}

// LoadPrivateKey reads a PEM private key file, which must be readable by
// its owner only: a key others could read may have been copied.
func LoadPrivateKey(path string) (crypto.Signer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: key file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("mcp: auth: key file %s has mode %v; it must be readable by its owner only (chmod 600)", path, info.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: key file: %w", err)
	}
	return ParsePrivateKey(b)
}

// signingAlg is the JWS algorithm for key: alg if given and fitting,
// else the key's natural one.
func signingAlg(key crypto.Signer, alg string) (string, error) {
	var natural []string
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			natural = []string{"ES256"}
		case elliptic.P384():
			natural = []string{"ES384"}
		case elliptic.P521():
			natural = []string{"ES512"}
		}
	case *rsa.PublicKey:
		natural = []string{"RS256", "PS256"}
	case ed25519.PublicKey:
		natural = []string{"EdDSA"}
	}
	if len(natural) == 0 {
		return "", errors.New("mcp: auth: unsupported key type (want ECDSA P-256/384/521, RSA or Ed25519)")
	}
	if alg == "" {
		return natural[0], nil
	}
	for _, a := range natural {
		if a == alg {
			return alg, nil
		}
	}
	return "", fmt.Errorf("mcp: auth: signing algorithm %s does not fit the key (%v)", alg, natural)
}

// signJWT signs claims with key as a compact JWS; header gets alg.
func signJWT(key crypto.Signer, alg string, header, claims map[string]any) (string, error) {
	alg, err := signingAlg(key, alg)
	if err != nil {
		return "", err
	}
	h := map[string]any{"alg": alg}
	for k, v := range header {
		h[k] = v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(hb) + "." + enc.EncodeToString(cb)
	sig, err := sign(key, alg, []byte(input))
	if err != nil {
		return "", fmt.Errorf("mcp: auth: sign: %w", err)
	}
	return input + "." + enc.EncodeToString(sig), nil
}

func sign(key crypto.Signer, alg string, input []byte) ([]byte, error) {
	switch alg {
	case "EdDSA":
		return key.Sign(rand.Reader, input, crypto.Hash(0))
	case "RS256":
		sum := sha256.Sum256(input)
		return key.Sign(rand.Reader, sum[:], crypto.SHA256)
	case "PS256":
		sum := sha256.Sum256(input)
		return key.Sign(rand.Reader, sum[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256})
	}
	var digest []byte
	var size int
	switch alg {
	case "ES256":
		s := sha256.Sum256(input)
		digest, size = s[:], 32
	case "ES384":
		s := sha512.Sum384(input)
		digest, size = s[:], 48
	case "ES512":
		s := sha512.Sum512(input)
		digest, size = s[:], 66
	default:
		return nil, fmt.Errorf("unsupported algorithm %s", alg)
	}
	der, err := key.Sign(rand.Reader, digest, crypto.Hash(0))
	if err != nil {
		return nil, err
	}
	// JWS wants r||s, each of the curve's size, not ASN.1.
	var parsed struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &parsed); err != nil {
		return nil, err
	}
	out := make([]byte, 2*size)
	parsed.R.FillBytes(out[:size])
	parsed.S.FillBytes(out[size:])
	return out, nil
}

// publicJWK is the public JWK of an ECDSA key, with only the members its
// RFC 7638 thumbprint uses.
func publicJWK(key *ecdsa.PrivateKey) map[string]any {
	size := (key.Curve.Params().BitSize + 7) / 8
	x, y := make([]byte, size), make([]byte, size)
	pub, _ := key.PublicKey.ECDH()
	raw := pub.Bytes() // 0x04 || X || Y
	copy(x, raw[1:1+size])
	copy(y, raw[1+size:])
	return map[string]any{
		"kty": "EC",
		"crv": key.Curve.Params().Name,
		"x":   base64.RawURLEncoding.EncodeToString(x),
		"y":   base64.RawURLEncoding.EncodeToString(y),
	}
}
