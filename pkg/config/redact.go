package config

import (
	"net/url"
	"slices"
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
	r.references = references{} // the values read through references
	r.Source.Tables = append([]string(nil), c.Source.Tables...)
	r.Source.MaskColumns = append([]MaskColumns(nil), c.Source.MaskColumns...)
	for i := range r.Source.MaskColumns {
		if r.Source.MaskColumns[i].Salt != "" {
			r.Source.MaskColumns[i].Salt = RedactedValue
		}
	}
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
	r.Format.redactRegistry()
	return r
}

// RedactURL masks the secrets of a source.url or webhooks.row_skipped_url
// in every form they take (docs/configuration.md): the password of a URL's
// user info (postgres://, mysql://, https://), of a go-sql-driver DSN
// (user:password@tcp(host:3306)/db) and of libpq key/value settings
// (password='…'), and the values of query parameters or keywords whose
// names mention a password, secret, token or key. Everything else is kept
// as written, so the result still shows user, host and database. Where the
// readers of the string (pgx, mysql.ParseURL, net/url) would disagree on
// where a password ends, the wider reading is masked; a URL with an '@'
// after its host part (a password with an unescaped '/') is replaced whole.
// Empty passwords stay empty.
func RedactURL(s string) string {
	spans, whole := urlSecretSpans(s)
	if whole {
		return RedactedValue
	}
	return mask(s, spans)
}

// urlSecretSpans returns the spans of s that RedactURL masks, or whole
// when all of s is to be masked.
func urlSecretSpans(s string) (spans [][2]int, whole bool) {
	scheme, rest, ok := strings.Cut(s, "//")
	if ok && (scheme == "" || strings.HasSuffix(scheme, ":") && isScheme(scheme[:len(scheme)-1])) {
		base := len(scheme) + len("//")
		// libpq and pgx end the user info at the first '@' before a '/',
		// net/url at the last '@' before a '/', '?' or '#': mask from the
		// first ':' to the last '@' before the first '/'.
		host, tail, _ := strings.Cut(rest, "/")
		if strings.Contains(tail, "@") {
			return nil, true
		}
		from := base
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			if colon := strings.IndexByte(host[:at], ':'); colon >= 0 {
				spans = append(spans, [2]int{base + colon + 1, base + at})
			}
			from += at + 1
		}
		// The query starts at the first '?' after the user info, in the
		// host part (postgres://h?password=…) or after the path.
		if q := strings.IndexByte(s[from:], '?'); q >= 0 {
			spans = append(spans, queryValues(s, from+q+1)...)
		}
	} else {
		spans = append(spans, keywordValues(s)...)
		spans = append(spans, dsnSecrets(s)...)
	}
	return spans, false
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, '+', '-', '.').
func isScheme(s string) bool {
	for i, c := range []byte(s) {
		letter := c|0x20 >= 'a' && c|0x20 <= 'z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// queryValues returns the spans of the secret values in the name=value
// pairs joined by '&' that run from s[from] to the end. A value runs to the
// next '&' (a '#' is part of it for pgx, a fragment for net/url).
func queryValues(s string, from int) [][2]int {
	var spans [][2]int
	for from <= len(s) {
		end := strings.IndexByte(s[from:], '&')
		if end < 0 {
			end = len(s) - from
		}
		if name, _, ok := strings.Cut(s[from:from+end], "="); ok && secretParam(name) {
			spans = append(spans, [2]int{from + len(name) + 1, from + end})
		}
		from += end + 1
	}
	return spans
}

// dsnSecrets returns the span of the password in a go-sql-driver DSN,
// user:password@protocol(address)/dbname?params, read as go-sql-driver and
// mysql.ParseURL read it: from the first ':' to the last '@' before the last
// '/' (the whole string when there is no '/'), and the spans of secret
// parameters.
func dsnSecrets(s string) [][2]int {
	var spans [][2]int
	head := s
	if slash := strings.LastIndexByte(s, '/'); slash >= 0 {
		head = s[:slash]
		if q := strings.IndexByte(s[slash:], '?'); q >= 0 {
			spans = queryValues(s, slash+q+1)
		}
	}
	if at := strings.LastIndexByte(head, '@'); at >= 0 {
		if colon := strings.IndexByte(head[:at], ':'); colon >= 0 {
			spans = append(spans, [2]int{colon + 1, at})
		}
	}
	return spans
}

// connSpace is the white space of libpq key/value settings.
const connSpace = " \t\n\r\v\f"

// keywordValues returns the spans of the secret values in libpq key/value
// settings (host=db password='it\'s' dbname=shop), read as pgx reads them:
// a keyword, optional spaces, '=', optional spaces, then a value in single
// quotes or up to the next space, with backslash escapes. An unterminated
// quoted value runs to the end. A quoted value keeps its quotes.
func keywordValues(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			break
		}
		eq += i
		key := strings.TrimRight(s[i:eq], connSpace)
		key = key[strings.LastIndexAny(key, connSpace)+1:]
		v := eq + 1
		for v < len(s) && strings.IndexByte(connSpace, s[v]) >= 0 {
			v++
		}
		end := v
		if end < len(s) && s[end] == '\'' {
			// The quotes stay: what follows them is not read as part of the value.
			v++
			for end++; end < len(s) && s[end] != '\''; end++ {
				if s[end] == '\\' {
					end++
				}
			}
			end = min(end, len(s))
		} else {
			for ; end < len(s) && strings.IndexByte(connSpace, s[end]) < 0; end++ {
				if s[end] == '\\' {
					end++
				}
			}
			end = min(end, len(s))
		}
		if end > v && keyword(key) && secretParam(key) {
			spans = append(spans, [2]int{v, end})
		}
		i = max(end, eq+1)
	}
	return spans
}

// keyword reports whether s can be a libpq setting's name.
func keyword(s string) bool {
	for _, c := range []byte(s) {
		if !(c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// mask replaces each non-empty span of s (overlapping spans as one) by
// RedactedValue.
func mask(s string, spans [][2]int) string {
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); i++ {
		start, end := spans[i][0], spans[i][1]
		for i+1 < len(spans) && spans[i+1][0] <= end {
			i++
			end = max(end, spans[i][1])
		}
		if start < at || end <= start {
			continue
		}
		b.WriteString(s[at:start])
		b.WriteString(RedactedValue)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
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
