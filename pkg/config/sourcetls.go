package config

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
)

// SourceTLS is what source.ca_certificate / client_certificate / client_key
// ask of the database connection, with the URL's own TLS setting.
type SourceTLS struct {
	// Enabled: the sources build their own *tls.Config (VerifyChain
	// decides how far it verifies) instead of the driver's default.
	Enabled bool
	// Roots is the only authority trusted; nil means the system roots.
	Roots *x509.CertPool
	// Certificates holds the client certificate, when one is given.
	Certificates []tls.Certificate
	// HostName is false only for PostgreSQL sslmode=verify-ca without
	// source.ca_certificate: the chain is checked, the host name is not.
	HostName bool
}

// SourceTLSSettings reads the TLS fields of s for its type. The URL decides
// whether TLS is on when no certificate field is set; any certificate field
// turns it on and makes verification full (chain and host name). It assumes
// Validate passed; an error here is a bug in the caller.
func SourceTLSSettings(s *Source) (SourceTLS, error) {
	t := SourceTLS{HostName: true}
	if s.CACertificate != "" || s.ClientCertificate != "" {
		t.Enabled = true
	} else {
		switch s.Type {
		case SourcePostgres:
			// verify-full / verify-ca: we verify ourselves, so the error
			// says what failed in words. require / prefer / allow keep
			// the driver's behaviour (no verification, as libpq).
			// An sslrootcert file in the URL is the driver's to read.
			mode, rootFile := pgSSL(s.URL)
			switch {
			case rootFile != "":
			case mode == "verify-full":
				t.Enabled = true
			case mode == "verify-ca":
				t.Enabled, t.HostName = true, false
			}
		case SourceMySQL:
			if c, err := ParseMySQLURL(s.URL); err == nil {
				v := c.Params["tls"]
				t.Enabled = v == "true" || v == "preferred"
			}
		}
	}
	if s.CACertificate != "" {
		t.Roots = x509.NewCertPool()
		t.Roots.AppendCertsFromPEM([]byte(s.CACertificate))
	}
	if s.ClientCertificate != "" {
		c, err := tls.X509KeyPair([]byte(s.ClientCertificate), []byte(s.ClientKey))
		if err != nil {
			return t, errSourceClientKey
		}
		t.Certificates = []tls.Certificate{c}
	}
	return t, nil
}

var errSourceClientKey = &Errors{Problems: []Problem{{Field: "source.client_key", Message: "does not parse or does not match client_certificate"}}}

// pgSSL returns the sslmode and sslrootcert of a postgres:// URL (neither
// is secret; the rest of the URL may be).
func pgSSL(raw string) (mode, rootFile string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	q := u.Query()
	return q.Get("sslmode"), q.Get("sslrootcert")
}

// sourceTLS checks the source's certificate fields with the destination's
// rules (PEM text, never a file path; certificate and key together) and
// against the URL: TLS switched off in the URL and a certificate field set
// contradict each other, and so do a CA file in the URL and ca_certificate.
// Messages never quote PEM text or the URL.
func (v validator) sourceTLS(s *Source) {
	fields := []struct{ field, value string }{
		{"source.ca_certificate", s.CACertificate},
		{"source.client_certificate", s.ClientCertificate},
		{"source.client_key", s.ClientKey},
	}
	set := false
	for _, f := range fields {
		set = set || f.value != ""
	}
	if !set {
		return
	}
	switch s.Type {
	case SourcePostgres:
		u, err := url.Parse(s.URL)
		if err != nil {
			break // source.url reports it
		}
		q := u.Query()
		if q.Get("sslmode") == "disable" {
			for _, f := range fields {
				if f.value != "" {
					v.add(f.field, "needs TLS, but source.url has sslmode=disable; remove one of the two")
				}
			}
		}
		if q.Get("sslrootcert") != "" {
			// With any certificate field, the sources verify against
			// ca_certificate (or the system roots), never a file.
			v.add("source.ca_certificate", "is where the authority goes with the source's certificate fields; move the PEM of sslrootcert (in source.url) here and remove sslrootcert")
		}
		if s.ClientCertificate != "" && (q.Get("sslcert") != "" || q.Get("sslkey") != "") {
			v.add("source.client_certificate", "and sslcert/sslkey in source.url both give a client certificate; remove sslcert and sslkey")
		}
	case SourceMySQL:
		c, err := ParseMySQLURL(s.URL)
		if err != nil {
			break // source.url reports it
		}
		if c.Params["tls"] == "false" {
			for _, f := range fields {
				if f.value != "" {
					v.add(f.field, "needs TLS, but source.url has tls=false; remove one of the two")
				}
			}
		}
	default:
		for _, f := range fields {
			if f.value != "" {
				v.add(f.field, "is supported for postgres and mysql sources only")
			}
		}
		return
	}

	if s.CACertificate != "" {
		if msg := checkPEM(s.CACertificate, "CERTIFICATE"); msg != "" {
			v.add("source.ca_certificate", "%s", msg)
		} else if !x509.NewCertPool().AppendCertsFromPEM([]byte(s.CACertificate)) {
			v.add("source.ca_certificate", "holds no certificate that parses")
		}
	}
	certOK, keyOK := false, false
	if s.ClientCertificate != "" {
		if msg := checkPEM(s.ClientCertificate, "CERTIFICATE"); msg != "" {
			v.add("source.client_certificate", "%s", msg)
		} else {
			certOK = true
		}
	}
	if s.ClientKey != "" {
		if msg := checkPEM(s.ClientKey, "PRIVATE KEY"); msg != "" {
			v.add("source.client_key", "%s", msg)
		} else {
			keyOK = true
		}
	}
	switch {
	case s.ClientCertificate != "" && s.ClientKey == "":
		v.add("source.client_key", "required with client_certificate (a certificate login needs both)")
	case s.ClientKey != "" && s.ClientCertificate == "":
		v.add("source.client_certificate", "required with client_key (a certificate login needs both)")
	case certOK && keyOK:
		if _, err := tls.X509KeyPair([]byte(s.ClientCertificate), []byte(s.ClientKey)); err != nil {
			v.add("source.client_key", "does not parse or does not match client_certificate")
		}
	}
}
