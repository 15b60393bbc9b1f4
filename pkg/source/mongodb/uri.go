package mongodb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// Settings is a validated connection to a MongoDB deployment.
type Connection struct {
	// URI is the connection string as given; it may hold a password and is
	// never written to logs or errors (Redacted is).
	URI string
	// Password, when set (e.g. from SSM), replaces the URI's password.
	Password string
	// CAFile is a PEM bundle that verifies the server (TLS on); empty uses
	// the system roots.
	CAFile string
	// CAPEM is the same bundle as bytes (from SSM); CAFile wins when both
	// are set.
	CAPEM []byte
	// CertPEM and KeyPEM are the client certificate and its key (from
	// SSM), presented in the TLS handshake: for X.509 authentication
	// (authMechanism=MONGODB-X509) or a server that requires one.
	CertPEM, KeyPEM []byte
	// Dial, when set, makes every connection to the servers (the
	// connection-test function's guarded dialer); nil dials directly.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	parsed *connstring.ConnString
}

// Redacted is the URI with its password replaced by "xxxxx", for logs.
func (s Connection) Redacted() string { return redactURI(s.URI) }

// Scrub is err's message with the connection's password hidden.
func (s Connection) Scrub(err error) string { return scrub(err.Error(), s.URI, s.Password) }

// redactURI hides the password of a mongodb:// or mongodb+srv:// URI even
// when the rest does not parse, and the values of authMechanismProperties
// (AWS_SESSION_TOKEN is a secret), however the option's name is spelled.
func redactURI(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "<not a mongodb:// URI>"
	}
	user, tail, hasUser := cutUserinfo(rest)
	if hasUser {
		if name, _, hasPass := strings.Cut(user, ":"); hasPass {
			user = name + ":xxxxx"
		}
		user += "@"
	}
	if path, q, ok := strings.Cut(tail, "?"); ok {
		pairs := strings.Split(q, "&")
		for i, pair := range pairs {
			if name, value, _ := strings.Cut(pair, "="); isOption(name, "authMechanismProperties") {
				pairs[i] = name + "=" + redactProperties(value)
			}
		}
		tail = path + "?" + strings.Join(pairs, "&")
	}
	return scheme + "://" + user + tail
}

// redactProperties is an authMechanismProperties value, decoded, with
// each AWS_SESSION_TOKEN's value replaced by "xxxxx"; all of it when it
// does not decode.
func redactProperties(value string) string {
	v, err := url.QueryUnescape(value)
	if err != nil {
		return "xxxxx"
	}
	props := strings.Split(v, ",")
	for i, prop := range props {
		if k, _, ok := strings.Cut(prop, ":"); ok && strings.EqualFold(k, "AWS_SESSION_TOKEN") {
			props[i] = k + ":xxxxx"
		}
	}
	return strings.Join(props, ",")
}

// cutUserinfo splits what follows a URI's "://" at the '@' that ends its
// user name and password: the last '@' of all, since a password may hold
// an unescaped '@', '/' or '?' that the driver would read differently
// (checkURI refuses more than one '@'); it hides too much rather than too
// little.
func cutUserinfo(rest string) (user, tail string, ok bool) {
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", rest, false
	}
	return rest[:at], rest[at+1:], true
}

// isOption reports whether a query option's raw name is name, in any
// case and escaping, as the driver reads it.
func isOption(rawName, name string) bool {
	n, err := url.QueryUnescape(rawName)
	return err == nil && strings.EqualFold(n, name)
}

// uriSessionTokens are the AWS_SESSION_TOKENs of a URI's
// authMechanismProperties (MONGODB-AWS with temporary credentials),
// decoded as the driver decodes them: secrets like the password beside
// them.
func uriSessionTokens(raw string) []string {
	var out []string
	for _, pair := range queryPairs(raw) {
		name, value, _ := strings.Cut(pair, "=")
		if !isOption(name, "authMechanismProperties") {
			continue
		}
		if v, err := url.QueryUnescape(value); err == nil {
			value = v
		}
		for _, prop := range strings.Split(value, ",") {
			if k, v, ok := strings.Cut(prop, ":"); ok && strings.EqualFold(k, "AWS_SESSION_TOKEN") && v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// queryPairs are a URI's "name=value" options as written, in order; none
// when it has no '?' after its user name and password (a password may
// hold '?', '=' and '&').
func queryPairs(raw string) []string {
	_, rest, _ := strings.Cut(raw, "://")
	_, tail, _ := cutUserinfo(rest)
	_, q, ok := strings.Cut(tail, "?")
	if !ok {
		return nil
	}
	return strings.Split(q, "&")
}

// checkURI is what both validate and run refuse in a URI's syntax, in
// words that never quote it. The driver reads a mongodb+srv:// URI by
// looking its name up in DNS: its syntax is checked here as a mongodb://
// URI's, and the name is looked up when the pipeline connects.
func checkURI(raw string) (*connstring.ConnString, error) {
	scheme, rest, _ := strings.Cut(raw, "://")
	if strings.Count(rest, "@") > 1 {
		return nil, errors.New("holds '@' more than once: percent-encode an '@' in the user name, the password or an option as %40")
	}
	asPlain := rest
	if scheme == connstring.SchemeMongoDBSRV {
		asPlain = withoutSRVOptions(rest)
	}
	cs, err := connstring.Parse("mongodb://" + asPlain)
	if err != nil {
		// The driver's words may quote the password's characters (a
		// bad escape "%SE"): a password's problem is named, not shown.
		if msg := err.Error(); strings.Contains(msg, "invalid password") {
			return nil, errors.New("its password is not percent-encoded (each '%' must start %XX, and '/', ':' and '@' must be written %2F, %3A and %40); the password is not shown")
		}
		return nil, errors.New(scrub(err.Error(), raw, ""))
	}
	if scheme == connstring.SchemeMongoDBSRV {
		if len(cs.Hosts) != 1 || strings.Contains(cs.RawHosts[0], ":") {
			return nil, errors.New("a mongodb+srv:// URI names one host name, without a port")
		}
		cs.Scheme, cs.Original = connstring.SchemeMongoDBSRV, raw
	}
	if err := cs.Validate(); err != nil {
		return nil, &driverRule{scrub(err.Error(), raw, "")}
	}
	return cs, nil
}

// withoutSRVOptions is rest (a URI after its "://") without the options
// only a mongodb+srv:// URI may have (srvMaxHosts, srvServiceName), which
// the driver refuses in the mongodb:// URI checkURI parses instead.
func withoutSRVOptions(rest string) string {
	user, tail, hasUser := cutUserinfo(rest)
	path, q, ok := strings.Cut(tail, "?")
	if !ok {
		return rest
	}
	var kept []string
	for _, pair := range strings.Split(q, "&") {
		if name, _, _ := strings.Cut(pair, "="); srvOption(name) {
			continue
		}
		kept = append(kept, pair)
	}
	out := path + "?" + strings.Join(kept, "&")
	if hasUser {
		out = user + "@" + out
	}
	return out
}

// srvOption reports whether a query option's raw name is one only a
// mongodb+srv:// URI may have (srvMaxHosts, srvServiceName).
func srvOption(rawName string) bool {
	return isOption(rawName, "srvMaxHosts") || isOption(rawName, "srvServiceName")
}

// driverRule is a URI the driver parses but refuses to connect with
// (options that exclude each other, a mechanism without what it needs).
type driverRule struct{ msg string }

func (e *driverRule) Error() string { return e.msg }

// ParseSettings checks a connection URI: its scheme (mongodb:// or
// mongodb+srv://), its syntax, and that it does not turn TLS verification
// off. Errors name the problem and show the URI with its password hidden.
func ParseConnection(s Connection) (Connection, error) {
	if !strings.HasPrefix(s.URI, "mongodb://") && !strings.HasPrefix(s.URI, "mongodb+srv://") {
		return s, fmt.Errorf("source.url %s: want a mongodb:// or mongodb+srv:// URI", redactURI(s.URI))
	}
	cs, err := checkURI(s.URI)
	if err != nil {
		return s, fmt.Errorf("source.url %s: %s", redactURI(s.URI), scrub(err.Error(), s.URI, s.Password))
	}
	if cs.SSLInsecure {
		return s, fmt.Errorf("source.url %s: tlsInsecure/tlsAllowInvalidCertificates turns TLS verification off, which Tributary never does; give the CA instead (source.ca_certificate)", redactURI(s.URI))
	}
	q := lowerQuery(s.URI)
	for _, k := range []string{"tlsallowinvalidcertificates", "tlsallowinvalidhostnames", "tlsinsecure", "sslallowinvalidcertificates", "sslallowinvalidhostnames"} {
		if v, ok := q[k]; ok && strings.EqualFold(v, "true") {
			return s, fmt.Errorf("source.url %s: %s=true turns TLS verification off, which Tributary never does; give the CA instead (source.ca_certificate)", redactURI(s.URI), k)
		}
	}
	if cs.SSLCaFileSet && (s.CAFile != "" || s.CAPEM != nil) {
		return s, fmt.Errorf("source.url %s: tlsCAFile in the URI and source.ca_certificate both name a CA; keep one", redactURI(s.URI))
	}
	s.parsed = cs
	return s, nil
}

// lowerQuery returns the URI's query options with lower-cased names.
func lowerQuery(raw string) map[string]string {
	out := map[string]string{}
	pairs := queryPairs(raw)
	if pairs == nil {
		return out
	}
	vals, err := url.ParseQuery(strings.Join(pairs, "&"))
	if err != nil {
		return out
	}
	for k, v := range vals {
		if len(v) > 0 {
			out[strings.ToLower(k)] = v[len(v)-1]
		}
	}
	return out
}

// minScrubbed is the shortest secret replaced wherever it appears in a
// message, as config's scrubber does: a shorter one would garble every
// message (and show itself by the gaps); the URI is still redacted whole.
const minScrubbed = 4

// scrub removes the password (from the URI or given) and the URI's session
// tokens from a message.
func scrub(msg, uri, password string) string {
	raw, decoded := uriPassword(uri)
	for _, p := range append([]string{password, raw, decoded}, uriSessionTokens(uri)...) {
		if len(p) < minScrubbed {
			continue
		}
		msg = strings.ReplaceAll(msg, p, "xxxxx")
		for _, esc := range []string{url.QueryEscape(p), url.PathEscape(p)} {
			if esc != p {
				msg = strings.ReplaceAll(msg, esc, "xxxxx")
			}
		}
	}
	if uri != "" {
		msg = strings.ReplaceAll(msg, uri, redactURI(uri))
	}
	return msg
}

// uriPassword is the URI's password as written and decoded (both "" when
// it has none).
func uriPassword(uri string) (raw, decoded string) {
	_, rest, _ := strings.Cut(uri, "://")
	user, _, _ := cutUserinfo(rest)
	_, raw, _ = strings.Cut(user, ":")
	if un, err := url.PathUnescape(raw); err == nil {
		return raw, un
	}
	return raw, raw
}

// clientOptions builds the driver's options: the URI, the password from
// outside it, and TLS with the given CA (verification always on).
func (s Connection) clientOptions() (*options.ClientOptions, error) {
	if s.parsed == nil {
		return nil, errors.New("mongodb: settings not parsed (call ParseSettings)")
	}
	o := options.Client().ApplyURI(s.URI).SetAppName("tributary")
	if s.Password != "" {
		cred := options.Credential{Username: s.parsed.Username, Password: s.Password, PasswordSet: true,
			AuthSource: s.parsed.AuthSource, AuthMechanism: s.parsed.AuthMechanism}
		if cred.Username == "" {
			return nil, fmt.Errorf("source.url %s: a password is given but the URI names no user", s.Redacted())
		}
		o.SetAuth(cred)
	}
	tc, err := s.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		o.SetTLSConfig(tc)
	}
	if s.Dial != nil {
		o.SetDialer(dialFunc(s.Dial))
	}
	return o, nil
}

// dialFunc is a dial function as the driver's ContextDialer.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// tlsConfig is the TLS the connection asks for beyond the URI's: the CA
// that verifies the servers (the system roots without one) and the
// client certificate to present; nil when neither is given (the URI's
// tls=true then uses the system roots). Verification is never off: the
// driver checks each server's certificate and host name.
func (s Connection) tlsConfig() (*tls.Config, error) {
	pem := s.CAPEM
	if s.CAFile != "" {
		b, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("source.ca_certificate %s: %w", s.CAFile, err)
		}
		pem = b
	}
	if pem == nil && s.CertPEM == nil && s.KeyPEM == nil {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if pem != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("source.ca_certificate: no PEM certificate in it")
		}
		tc.RootCAs = pool
	}
	switch {
	case s.CertPEM != nil && s.KeyPEM == nil:
		return nil, errors.New("source.client_key: required with source.client_certificate (a certificate login needs both)")
	case s.KeyPEM != nil && s.CertPEM == nil:
		return nil, errors.New("source.client_certificate: required with source.client_key (a certificate login needs both)")
	case s.CertPEM != nil:
		cert, err := tls.X509KeyPair(s.CertPEM, s.KeyPEM)
		if err != nil {
			// The key's bytes are a secret: the parser's message is not shown.
			return nil, errors.New("source.client_key: does not parse or does not match source.client_certificate")
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
