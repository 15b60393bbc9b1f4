package mongodb

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// A bad URI is an error naming source.url, and the password appears
// nowhere in it, whatever the problem.
func TestParseSettingsErrorsHideThePassword(t *testing.T) {
	for _, c := range []struct{ uri, want string }{
		{"postgres://u:s3cr3t-pw@h/db", "want a mongodb:// or mongodb+srv:// URI"},
		{"mongodb://u:s3cr3t-pw@h:notaport/db", "source.url mongodb://u:xxxxx@h:notaport/db"},
		{"mongodb://u:s3cr3t-pw@h/db?tls=true&tlsAllowInvalidCertificates=true", "turns TLS verification off"},
		{"mongodb://u:s3cr3t-pw@h/db?tlsInsecure=true", "turns TLS verification off"},
		{"mongodb://u:s3cr3t-pw@h/db?tls=true&tlsAllowInvalidHostnames=true", "turns TLS verification off"},
		{"mongodb+srv://u:s3cr3t-pw@h1:27017,h2/db", "source.url mongodb+srv://u:xxxxx@"},
		{"mongodb://u:s3cr3t-pw@h/db?maxPoolSize=abc", "source.url mongodb://u:xxxxx@h/db"},
	} {
		_, err := ParseConnection(Connection{URI: c.uri})
		if err == nil {
			t.Errorf("%s: no error", redactURI(c.uri))
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to say %q", redactURI(c.uri), err, c.want)
		}
	}
}

func TestParseSettingsAccepts(t *testing.T) {
	for _, uri := range []string{
		"mongodb://127.0.0.1:27017/?directConnection=true",
		"mongodb://user:p%40ss@h1:27017,h2:27017,h3:27017/admin?replicaSet=rs0&tls=true",
		"mongodb://docdb.cluster-x.us-east-1.docdb.amazonaws.com:27017/?tls=true&replicaSet=rs0&readPreference=secondaryPreferred&retryWrites=false",
	} {
		s, err := ParseConnection(Connection{URI: uri})
		if err != nil {
			t.Errorf("%s: %v", redactURI(uri), err)
			continue
		}
		if strings.Contains(s.Redacted(), "p%40ss") {
			t.Errorf("Redacted shows the password: %s", s.Redacted())
		}
	}
}

func TestRedactURI(t *testing.T) {
	for in, want := range map[string]string{
		"mongodb://u:pw@h/db?x=1":         "mongodb://u:xxxxx@h/db?x=1",
		"mongodb+srv://u:p@w:d@c.example": "mongodb+srv://u:xxxxx@c.example",
		"mongodb://h:1/db":                "mongodb://h:1/db",
		"mongodb://u@h":                   "mongodb://u@h",
		"garbage":                         "<not a mongodb:// URI>",
	} {
		if got := redactURI(in); got != want {
			t.Errorf("redactURI(%q) = %q, want %q", in, got, want)
		}
	}
}

// A password given outside the URI (from SSM) needs a user in the URI;
// a CA that is not PEM is refused, naming source.ca_certificate.
func TestClientOptions(t *testing.T) {
	s, err := ParseConnection(Connection{URI: "mongodb://h/db", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.clientOptions(); err == nil || strings.Contains(err.Error(), "pw@") {
		t.Errorf("password without user: %v", err)
	}
	s, err = ParseConnection(Connection{URI: "mongodb://u@h/db", Password: "pw", CAPEM: []byte("not pem")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.clientOptions(); err == nil || !strings.Contains(err.Error(), "source.ca_certificate") {
		t.Errorf("bad CA: %v", err)
	}
}

// A MONGODB-AWS session token in authMechanismProperties is a secret as
// the password is: Redacted and Scrub hide both, escaped or not.
func TestRedactSessionToken(t *testing.T) {
	const tok = "IQoJb3JpZ2luX2Vj%2Ftok3n"
	uri := "mongodb://AKIAX:s3cr3t@h:27017/?authMechanism=MONGODB-AWS&authMechanismProperties=SERVICE_NAME:x,AWS_SESSION_TOKEN:" + tok
	c := Connection{URI: uri}
	for _, got := range []string{c.Redacted(), c.Scrub(errors.New("dial " + uri + " token IQoJb3JpZ2luX2Vj/tok3n"))} {
		if strings.Contains(got, "tok3n") || strings.Contains(got, "s3cr3t") {
			t.Errorf("shows a secret: %s", got)
		}
		if !strings.Contains(got, "AWS_SESSION_TOKEN:xxxxx") {
			t.Errorf("%s: want the token's place kept", got)
		}
	}
}

// A password from SSM is put into the URI as it is stored. One that holds
// an unescaped '@' (and later a '/') was read by the driver as a short
// password followed by a host, and shown, nearly whole, in the error of
// the host's lookup: such a URI is refused before anything connects, and
// neither the refusal nor the redacted URI shows any part of it.
func TestPasswordWithUnescapedAtIsRefusedUnseen(t *testing.T) {
	for _, pw := range []string{"k@[Xy7Qp2LmZr8Wv]/t4", "k@9:Xy7Qp2LmZr8Wv/t4", "a?b@Xy7Qp2LmZr8Wv", "Xy7Qp2@LmZr8Wv"} {
		uri := "mongodb://rvu:" + pw + "@db.example.com:27017/"
		_, err := ParseConnection(Connection{URI: uri})
		problems := urlProblems(uri)
		for _, got := range []string{fmt.Sprint(err), redactURI(uri), strings.Join(problems, "; ")} {
			if strings.Contains(got, "Xy7Qp2") || strings.Contains(got, "LmZr8Wv") {
				t.Errorf("password %q: shows part of it: %s", pw, got)
			}
		}
		if err == nil || !strings.Contains(err.Error(), "%40") {
			t.Errorf("password %q: %v, want a refusal that says to write '@' as %%40", pw, err)
		}
		if len(problems) == 0 {
			t.Errorf("password %q: validate lists no problem", pw)
		}
	}
}

// The driver decodes an option's name and value: a session token given as
// authMechanism%50roperties, with an escaped ':' or twice is a secret too.
func TestSessionTokenSpellingsHidden(t *testing.T) {
	for _, q := range []string{
		"authMechanismProperties=AWS_SESSION_TOKEN%3AtokAAAA1111",
		"authMechanism%50roperties=AWS_SESSION_TOKEN:tokAAAA1111",
		"authMechanismProperties=AWS_SESSION_TOKEN:tokBBBB2222&authmechanismproperties=AWS_SESSION_TOKEN:tokAAAA1111",
	} {
		uri := "mongodb://AKIAX:s3cr3t@h:27017/?authMechanism=MONGODB-AWS&" + q
		c := Connection{URI: uri}
		for _, got := range []string{c.Redacted(), c.Scrub(errors.New("auth failed with tokAAAA1111 (tokBBBB2222) for " + uri))} {
			for _, secret := range []string{"tokAAAA1111", "tokBBBB2222", "s3cr3t"} {
				if strings.Contains(q, secret) && strings.Contains(got, secret) || strings.Contains(got, "s3cr3t") {
					t.Errorf("%s: shows %s: %s", q, secret, got)
				}
			}
		}
	}
}

// A password shorter than the scrubber's minimum is not cut out of every
// word of a message (which garbled it and showed the password by its
// gaps); the URI in it is still redacted.
func TestShortPasswordLeavesMessagesReadable(t *testing.T) {
	uri := "mongodb://rvu:e@h:27017/"
	got := Connection{URI: uri}.Scrub(errors.New("connection() error reaching " + uri))
	if got != "connection() error reaching mongodb://rvu:xxxxx@h:27017/" {
		t.Errorf("scrubbed: %s", got)
	}
}

// A bad escape in the password is named, not quoted: the driver's words
// ("invalid URL escape \"%SE\"") show three of its characters.
func TestBadPasswordEscapeNotQuoted(t *testing.T) {
	_, err := ParseConnection(Connection{URI: "mongodb://u:ab%SEcret99@h:27017/"})
	if err == nil || strings.Contains(err.Error(), "%SE") || strings.Contains(err.Error(), "cret99") || !strings.Contains(err.Error(), "password is not percent-encoded") {
		t.Errorf("bad escape: %v", err)
	}
}

// validate and run read a mongodb+srv:// URI without the network (the
// name is looked up when the pipeline connects), and refuse what the
// driver would refuse when it connects (options that exclude each other,
// a mechanism that needs a user).
func TestURIChecksWithoutNetwork(t *testing.T) {
	srv := "mongodb+srv://u:pw12@cluster0.nonexistent.invalid/?retryWrites=true"
	if _, err := ParseConnection(Connection{URI: srv}); err != nil {
		t.Errorf("mongodb+srv: %v", err)
	}
	if problems := urlProblems(srv); len(problems) > 0 {
		t.Errorf("mongodb+srv: validate says %q", problems)
	}
	for _, uri := range []string{
		"mongodb://h1:27017,h2:27017/?directConnection=true",
		"mongodb://h1:27017/?loadBalanced=true&replicaSet=rs0",
		"mongodb://h1:27017/?authMechanism=SCRAM-SHA-256",
	} {
		_, err := ParseConnection(Connection{URI: uri})
		if problems := urlProblems(uri); err == nil || len(problems) == 0 {
			t.Errorf("%s: run %v, validate %q: want both to refuse it", uri, err, problems)
		}
	}
}

// urlProblems are what validate says of source.url for a mongodb source
// of url.
func urlProblems(url string) []string {
	config.RegisterSource(Kind.SourceKind) // as pkg/capture does
	c := &config.Config{Source: config.Source{Type: "mongodb", URL: url}}
	var out []string
	var errs *config.Errors
	if err := c.Validate(); errors.As(err, &errs) {
		for _, p := range errs.Problems {
			if p.Field == "source.url" {
				out = append(out, p.Message)
			}
		}
	}
	return out
}

// The options only a mongodb+srv:// URI may have are accepted on one
// (its syntax is checked as a mongodb:// URI's, where the driver refuses
// them).
func TestSRVOptionsAccepted(t *testing.T) {
	for _, uri := range []string{
		"mongodb+srv://u:pw12@cluster0.abcde.mongodb.net/?srvMaxHosts=2&retryWrites=true&w=majority",
		"mongodb+srv://cluster0.abcde.mongodb.net/?srvServiceName=customname",
		"mongodb+srv://cluster0.abcde.mongodb.net/?SRVMAXHOSTS=1",
	} {
		if _, err := ParseConnection(Connection{URI: uri}); err != nil {
			t.Errorf("%s: %v", redactURI(uri), err)
		}
		if problems := urlProblems(uri); len(problems) > 0 {
			t.Errorf("%s: validate says %q", redactURI(uri), problems)
		}
	}
	if _, err := ParseConnection(Connection{URI: "mongodb://h:27017/?srvMaxHosts=2"}); err == nil {
		t.Error("srvMaxHosts on a mongodb:// URI: accepted")
	}
}

// validate lists every option of source.url the driver cannot read, not
// only the first (the driver's parse stops there).
func TestURIListsEveryBadOption(t *testing.T) {
	problems := urlProblems("mongodb://u:pw12@h/?connectTimeoutMS=abc&w=majority&maxPoolSize=-x")
	if len(problems) != 2 || !strings.Contains(problems[0], "connectTimeoutMS") || !strings.Contains(problems[1], "maxPoolSize") {
		t.Fatalf("problems %q: want connectTimeoutMS's, then maxPoolSize's", problems)
	}
	for _, p := range problems {
		if strings.Contains(p, "pw12") {
			t.Errorf("the password shown: %q", p)
		}
	}
}

// An option the driver does not know has no effect (the driver ignores
// it): validate warns, naming it as written, once; the options of the
// URIs Atlas and DocumentDB give are known.
func TestURIUnknownOptionWarned(t *testing.T) {
	config.RegisterSource(Kind.SourceKind)
	warned := func(url string) []string {
		c := &config.Config{Source: config.Source{Type: "mongodb", URL: url}}
		var out []string
		for _, w := range c.Warnings() {
			if w.Field == "source.url" {
				out = append(out, w.Message)
			}
		}
		return out
	}
	got := warned("mongodb://h/?replSet=rs0&w=majority&REPLSET=rs1")
	if len(got) != 1 || !strings.Contains(got[0], `"replSet"`) || strings.Contains(got[0], "rs0") {
		t.Errorf("replSet: warnings %q, want one naming it, without its value", got)
	}
	for _, url := range []string{
		"mongodb+srv://u:pw12@cluster0.abcde.mongodb.net/?retryWrites=true&w=majority&appName=Cluster0",
		"mongodb://u:pw12@docdb.cluster-x.us-east-1.docdb.amazonaws.com:27017/?tls=true&replicaSet=rs0&readPreference=secondaryPreferred&retryWrites=false",
	} {
		if got := warned(url); len(got) > 0 {
			t.Errorf("%s: warnings %q", redactURI(url), got)
		}
	}
}

// A password may hold '?', '=' and '&' unescaped (the driver refuses
// some of it): no part of it is read as an option, so no message shows
// a piece of it; nor does a warning name a piece of a secret option's
// value split at an unescaped '&'.
func TestURIOptionChecksShowNoSecretPiece(t *testing.T) {
	for _, c := range []struct{ url, secret string }{
		{"mongodb://app:Xy?maxPoolSize=HUNTER2SECRET&z@h/?connectTimeoutMS=abc", "HUNTER2SECRET"},
		{"mongodb://app:a?b=Zebra-9-Quartz@h/?w=majority", "Zebra-9-Quartz"},
		{"mongodb://h/?tlsCertificateKeyFilePassword=Kx7&Qz9Pr0d=Zq", "Qz9Pr0d"},
		{"mongodb://h/?proxyHost=p&proxyPassword=abc&DEFghi=jkl", "DEFghi"},
		{"mongodb://u:pw12@h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:tok&Secretpart=x", "Secretpart"},
	} {
		config.RegisterSource(Kind.SourceKind)
		cfg := &config.Config{Source: config.Source{Type: "mongodb", URL: c.url}}
		var out []string
		out = append(out, urlProblems(c.url)...)
		for _, w := range cfg.Warnings() {
			out = append(out, w.Message)
		}
		for _, msg := range out {
			if strings.Contains(msg, c.secret) {
				t.Errorf("%s: a message shows %q: %s", redactURI(c.url), c.secret, msg)
			}
		}
	}
	// The bad option after the password is still the one named.
	if p := urlProblems("mongodb://app:Xy?maxPoolSize=1&z@h/?connectTimeoutMS=abc"); len(p) != 1 || !strings.Contains(p[0], "connectTimeoutMS") {
		t.Errorf("problems %q, want connectTimeoutMS's", p)
	}
}
