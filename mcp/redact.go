package mcp

import (
	"errors"
	"net/url"
	"strings"
)

// redacted stands for a secret the library does not repeat.
const redacted = "REDACTED"

// redactURL returns rawURL without its secrets: a password in the user
// information and the value of every query parameter are replaced, so
// https://u:pw@host/mcp?api_key=k prints as
// https://u:REDACTED@host/mcp?api_key=REDACTED. Text that does not parse as
// a URL is replaced whole when it might hold a query or user information.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		if strings.ContainsAny(rawURL, "?@") {
			return redacted
		}
		return rawURL
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redacted}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment = redacted
	}
	return u.String()
}

// redactErr redacts the URL of a *url.Error (which net/http returns for a
// failed request, with the whole URL in its text).
func redactErr(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if ue.URL == redactURL(ue.URL) {
		return err
	}
	cp := *ue
	cp.URL = redactURL(ue.URL)
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
