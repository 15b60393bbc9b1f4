package source

import (
	"crypto/tls"
	"net"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// TLSState is test-connection's line about the TLS of an open connection
// to the source: "no TLS", or the version and how the server's
// certificate was verified. conn is the driver's network connection after
// the handshake; driverCfg the driver's own TLS configuration, which
// applies when the source's settings (config.SourceTLSSettings) leave TLS
// to the URL. It is information: run accepts what test-connection
// reaches, so the check never fails.
func TLSState(conn net.Conn, src *config.Source, driverCfg *tls.Config) Check {
	c := Check{Name: "source TLS", OK: true}
	tc, ok := conn.(*tls.Conn)
	if !ok {
		c.Detail = "no TLS: the connection, password included, is in plaintext"
		return c
	}
	c.Detail = tls.VersionName(tc.ConnectionState().Version) + ", " + verification(src, driverCfg)
	return c
}

// verification says how the certificate was checked, from the settings
// that made the connection (a finished handshake passed them).
func verification(src *config.Source, driverCfg *tls.Config) string {
	t, err := config.SourceTLSSettings(src)
	switch {
	case err == nil && t.Enabled && t.Roots != nil:
		return "certificate verified against source.ca_certificate" + hostNote(t.HostName)
	case err == nil && t.Enabled:
		return "certificate verified against the system's certificate authorities" + hostNote(t.HostName)
	case driverCfg == nil:
		return "certificate verification unknown"
	case driverCfg.InsecureSkipVerify && driverCfg.VerifyPeerCertificate == nil && driverCfg.VerifyConnection == nil:
		return "certificate NOT verified (sslmode=require or prefer): set source.ca_certificate or sslmode=verify-full to verify it"
	case driverCfg.InsecureSkipVerify:
		return "certificate chain verified against the URL's sslrootcert, host name not checked (sslmode=verify-ca)"
	case driverCfg.RootCAs != nil:
		return "certificate verified against the URL's sslrootcert" + hostNote(true)
	}
	return "certificate verified against the system's certificate authorities" + hostNote(true)
}

func hostNote(checked bool) string {
	if checked {
		return ", host name checked"
	}
	return ", host name not checked (sslmode=verify-ca)"
}
