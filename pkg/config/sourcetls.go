package config

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
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
	} else if k, ok := sourceKind(s.Type); ok && k.URLTLS != nil {
		t.Enabled, t.HostName = k.URLTLS(s.URL)
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

// tlsTypesText words the registered types that take TLS settings for a
// message: "postgres and mysql".
func tlsTypesText() string {
	var types []string
	for _, t := range SourceTypes() {
		if k, _ := sourceKind(t); k.URLTLS != nil {
			types = append(types, t)
		}
	}
	if len(types) < 2 {
		return strings.Join(types, "")
	}
	return strings.Join(types[:len(types)-1], ", ") + " and " + types[len(types)-1]
}

var errSourceClientKey = &Errors{Problems: []Problem{{Field: "source.client_key", Message: "does not parse or does not match client_certificate"}}}

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
	k, ok := sourceKind(s.Type)
	if !ok || k.URLTLS == nil {
		for _, f := range fields {
			if f.value != "" {
				v.add(f.field, "is supported for %s sources only", tlsTypesText())
			}
		}
		return
	}
	if k.CheckTLS != nil {
		k.CheckTLS(s, Report{v})
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
