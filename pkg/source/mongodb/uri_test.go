package mongodb

import (
	"errors"
	"strings"
	"testing"
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
