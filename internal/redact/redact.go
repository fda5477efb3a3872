// Package redact removes secrets from what is logged or returned: the
// password and query values of URLs, and the URL in net/http's errors.
package redact

import (
	"errors"
	"net/url"
	"strings"
)

// Placeholder stands for a secret that is not repeated.
const Placeholder = "REDACTED"

// URL returns rawURL without its secrets: the user information (a user
// name can be a token too: https://${TOKEN}@host), the value of every
// query parameter and the fragment are replaced, so
// https://u:pw@host/mcp?api_key=k prints as
// https://REDACTED:REDACTED@host/mcp?api_key=REDACTED. Text that does not parse as
// a URL is replaced whole when it might hold a query or user information.
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		if strings.ContainsAny(rawURL, "?@") {
			return Placeholder
		}
		return rawURL
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(Placeholder, Placeholder)
		} else {
			u.User = url.User(Placeholder)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{Placeholder}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment = Placeholder
	}
	return u.String()
}

// Err redacts the URL of a *url.Error (which net/http returns for a
// failed request, with the whole URL in its text).
func Err(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if ue.URL == URL(ue.URL) {
		return err
	}
	cp := *ue
	cp.URL = URL(ue.URL)
	if err == error(ue) {
		return &cp
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), ue.URL, cp.URL), err: err}
}

// redactedError is an error whose text had a secret removed; it still
// matches what the original matched.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
