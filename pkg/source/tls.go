package source

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// ErrTLSVerify marks a database certificate that did not verify.
var ErrTLSVerify = errors.New("the database's TLS certificate does not verify")

// TLSConfig is the client configuration for a database at host with the
// source's TLS settings: TLS 1.2 or later, the client certificate when one
// is given, and a full verification of the server's certificate (chain to
// t.Roots, or the system roots, and host, unless t.HostName is false).
//
// The verification is ours, in VerifyConnection, rather than crypto/tls's
// built-in one, only so that a failure says in words what is wrong and how
// to fix it (the drivers pass our error through). InsecureSkipVerify
// switches off the built-in check and nothing else; VerifyConnection runs
// on every handshake, resumed ones included, and fails it on any error.
func TLSConfig(t config.SourceTLS, host string) *tls.Config {
	v := verifier{roots: t.Roots, host: host, hostName: t.HostName}
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         host,
		Certificates:       t.Certificates,
		InsecureSkipVerify: true, // replaced by VerifyConnection, see above
		VerifyConnection:   v.verify,
	}
}

type verifier struct {
	roots    *x509.CertPool // nil: the system roots
	host     string
	hostName bool
}

func (v verifier) verify(cs tls.ConnectionState) error {
	certs := cs.PeerCertificates
	if len(certs) == 0 {
		return fmt.Errorf("%w: the server sent no certificate", ErrTLSVerify)
	}
	opts := x509.VerifyOptions{
		Roots:         v.roots,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if v.hostName {
		opts.DNSName = v.host
	}
	_, err := certs[0].Verify(opts)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrTLSVerify, v.explain(certs[0], err))
}

// explain words a verification error with its fix.
func (v verifier) explain(cert *x509.Certificate, err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		issuer := cert.Issuer.CommonName
		if v.roots != nil {
			return fmt.Sprintf("it is signed by an untrusted authority (%q), not by one in source.ca_certificate; "+
				"put the PEM of the authority that signed the database's certificate there (for RDS, the region's CA bundle)", issuer)
		}
		return fmt.Sprintf("it is signed by an untrusted authority (%q), not by one of the system's; "+
			"set source.ca_certificate to the PEM of that authority (for RDS, the region's CA bundle)", issuer)
	case errors.As(err, &host):
		names := append(append([]string(nil), cert.DNSNames...), ipStrings(cert)...)
		if len(names) == 0 && cert.Subject.CommonName != "" {
			names = []string{cert.Subject.CommonName + " (common name only, not checked)"}
		}
		return fmt.Sprintf("it is for the wrong host name: it names %s, not %q from source.url; "+
			"connect by a name the certificate holds (for RDS, the instance or cluster endpoint, not an IP address or a DNS alias)",
			strings.Join(names, ", "), v.host)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		now := time.Now().UTC()
		state := "has expired"
		if now.Before(cert.NotBefore) {
			state = "is not valid yet"
		}
		return fmt.Sprintf("it %s (valid from %s to %s, now %s); renew the server's certificate (for RDS, rotate the instance's certificate authority) or fix the clock",
			state, cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
	}
	return err.Error()
}

func ipStrings(c *x509.Certificate) []string {
	s := make([]string, len(c.IPAddresses))
	for i, ip := range c.IPAddresses {
		s[i] = ip.String()
	}
	return s
}

// CertificatesNeedTLS adds a problem for each certificate field s sets
// when its URL turns TLS off; off is how the URL says so, as the user
// wrote it ("tls=false").
func CertificatesNeedTLS(s *config.Source, r config.Report, off string) {
	for _, f := range []struct{ field, value string }{
		{"source.ca_certificate", s.CACertificate},
		{"source.client_certificate", s.ClientCertificate},
		{"source.client_key", s.ClientKey},
	} {
		if f.value != "" {
			r.Add(f.field, "needs TLS, but source.url has %s; remove one of the two", off)
		}
	}
}
