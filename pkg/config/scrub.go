package config

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A second line of defence behind messages that never quote a value: what
// a program shows (problem lists, log lines, API answers) passes a
// Scrubber that replaces every secret it was given by RedactedValue. The
// secrets are the values read through references (a reference is where a
// secret lives) and the values of the secret fields, URL passwords
// included.

// minScrubLength is the shortest value a Scrubber replaces inside text:
// shorter ones would wipe out ordinary words and numbers.
const minScrubLength = 4

// minScrubPrefix is the shortest leading part of a secret a Scrubber
// replaces on its own. Servers echo names cut to their own limit
// (PostgreSQL user and database names to 63 bytes, MariaDB user names to
// 128 characters, MySQL's to 32): a long secret put in such a name comes
// back cut, most of it still there.
const minScrubPrefix = 16

// Scrubber replaces secret values in text. The zero value and nil replace
// nothing.
type Scrubber struct {
	// needles are the secrets in every form text may carry them (as
	// they are, percent-decoded, inside Go quotes and JSON strings, once
	// or twice), longest first so a value goes whole before a part of it.
	needles []string
}

// NewScrubber returns a Scrubber of secrets; values shorter than four
// bytes are left alone.
func NewScrubber(secrets ...string) *Scrubber {
	seen := map[string]bool{}
	var needles []string
	for _, s := range secrets {
		if len(s) < minScrubLength {
			continue
		}
		// The value as read and percent-decoded (a value put in a URL's
		// user or database name is decoded by the driver, and servers echo
		// names), each as it is, %q-quoted and JSON-escaped, and escaped
		// once more (an error that quotes a name is quoted again by a log
		// line or a JSON answer).
		var forms []string
		for _, v := range []string{s, pathUnescaped(s), queryUnescaped(s)} {
			quoted := escapings(v)
			forms = append(forms, v)
			forms = append(forms, quoted...)
			for _, q := range quoted {
				forms = append(forms, escapings(q)...)
			}
		}
		for _, f := range forms {
			if len(f) >= minScrubLength && !seen[f] {
				seen[f] = true
				needles = append(needles, f)
			}
		}
	}
	slices.SortFunc(needles, func(a, b string) int { return len(b) - len(a) })
	return &Scrubber{needles: needles}
}

// escapings are v as a %q-quoted string and a JSON string hold it,
// without the quotes.
func escapings(v string) []string {
	quoted := strconv.Quote(v)
	out := []string{quoted[1 : len(quoted)-1]}
	if j, err := json.Marshal(v); err == nil {
		out = append(out, string(j[1:len(j)-1]))
	}
	return out
}

// pathUnescaped and queryUnescaped are s percent-decoded, or s when it
// does not decode.
func pathUnescaped(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

func queryUnescaped(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// String returns text with every secret replaced.
func (s *Scrubber) String(text string) string {
	if s == nil {
		return text
	}
	for _, n := range s.needles {
		if strings.Contains(text, n) {
			text = strings.ReplaceAll(text, n, RedactedValue)
		}
	}
	for _, n := range s.needles {
		if len(n) > minScrubPrefix {
			text = replaceLeadingParts(text, n)
		}
	}
	return text
}

// replaceLeadingParts replaces every run of text that is a leading part of
// secret, minScrubPrefix bytes or longer.
func replaceLeadingParts(text, secret string) string {
	head := secret[:minScrubPrefix]
	i := strings.Index(text, head)
	if i < 0 {
		return text
	}
	var b strings.Builder
	for ; i >= 0; i = strings.Index(text, head) {
		n := minScrubPrefix
		for i+n < len(text) && n < len(secret) && text[i+n] == secret[n] {
			n++
		}
		b.WriteString(text[:i])
		b.WriteString(RedactedValue)
		text = text[i+n:]
	}
	b.WriteString(text)
	return b.String()
}

// Problems returns a copy of problems with every message scrubbed.
func (s *Scrubber) Problems(problems []Problem) []Problem {
	out := slices.Clone(problems)
	for i := range out {
		out[i].Message = s.String(out[i].Message)
	}
	return out
}

// Writer returns a writer that scrubs what it is given, then writes it to
// w. Each Write is scrubbed on its own: a logger's line, a printed message.
func (s *Scrubber) Writer(w io.Writer) io.Writer {
	if s == nil || len(s.needles) == 0 {
		return w
	}
	return &scrubWriter{w: w, s: s}
}

type scrubWriter struct {
	w io.Writer
	s *Scrubber
}

func (sw *scrubWriter) Write(p []byte) (int, error) {
	for _, n := range sw.s.needles {
		if bytes.Contains(p, []byte(n[:min(len(n), minScrubPrefix)])) {
			if _, err := io.WriteString(sw.w, sw.s.String(string(p))); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return sw.w.Write(p)
}

// Secrets lists what a Scrubber of c must take out of what is shown:
// every value a reference in the document resolved to, the secret
// fields (passwords, external_id, client keys, signing_secret, mask
// salts), and the secret parts of source.url and webhooks.row_skipped_url
// (passwords, secret query parameters) even when typed in the document.
func (c *Config) Secrets() []string {
	out := slices.Clone(c.references.values)
	for _, s := range []string{c.Destination.Password, c.Destination.ExternalID, c.Destination.ClientKey,
		c.Source.ClientKey, c.Webhooks.SigningSecret} {
		if s != "" {
			out = append(out, s)
		}
	}
	out = append(out, c.Format.registrySecrets()...)
	for _, m := range c.Source.MaskColumns {
		if m.Salt != "" {
			out = append(out, m.Salt)
		}
	}
	for _, u := range []string{c.Source.URL, c.Webhooks.RowSkippedURL} {
		out = append(out, urlSecrets(u)...)
	}
	return out
}

// Scrubber returns the Scrubber of c.Secrets().
func (c *Config) Scrubber() *Scrubber { return NewScrubber(c.Secrets()...) }

// urlSecrets returns the secret parts of a URL or DSN, as RedactURL finds
// them, in the forms readers show them: as written and percent-decoded.
func urlSecrets(s string) []string {
	spans, whole := urlSecretSpans(s)
	if whole {
		return []string{s}
	}
	var out []string
	for _, sp := range spans {
		v := s[sp[0]:sp[1]]
		if v == "" {
			continue
		}
		out = append(out, v)
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	return out
}
