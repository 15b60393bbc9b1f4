package config

import (
	"net/url"
	"strings"
)

// RedactedValue is the placeholder that replaces a secret.
const RedactedValue = "REDACTED"

// Redacted returns a copy of c that is safe to log or show: passwords,
// external_id, client_key (both), signing_secret and refused tunnel settings are
// replaced by "REDACTED", and URLs lose their passwords and secret query
// parameters. Empty secrets stay empty, so the copy still shows what is unset.
func (c Config) Redacted() Config {
	r := c
	r.Source.Tables = append([]string(nil), c.Source.Tables...)
	if c.Source.Backfill != nil {
		b := *c.Source.Backfill
		r.Source.Backfill = &b
	}
	r.Source.URL = RedactURL(c.Source.URL)
	d := &r.Destination
	for _, secret := range []*string{&d.Password, &d.ExternalID, &d.ClientKey, &r.Source.ClientKey, &r.Webhooks.SigningSecret} {
		if *secret != "" {
			*secret = RedactedValue
		}
	}
	if d.SSHTunnel != nil {
		d.SSHTunnel = RedactedValue
	}
	if d.PrivateLink != nil {
		d.PrivateLink = RedactedValue
	}
	r.Webhooks.RowSkippedURL = RedactURL(c.Webhooks.RowSkippedURL)
	return r
}

// RedactURL masks the secrets in a connection or webhook URL: the password
// of its user info and the values of query parameters whose names mention
// a password, secret, token or key. A string that does not parse as a URL
// is replaced whole, since where its secret sits cannot be known.
func RedactURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return RedactedValue
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), RedactedValue)
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, p := range params {
			name, _, hasValue := strings.Cut(p, "=")
			if hasValue && secretParam(name) {
				params[i] = name + "=" + RedactedValue
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	return u.String()
}

func secretParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, w := range []string{"password", "passwd", "pwd", "secret", "token", "key", "signature", "sig"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
