package source

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, name string) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testCA{cert, key, pool}
}

// server signs a certificate for 127.0.0.1 valid until notAfter.
func (ca testCA) server(t *testing.T, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "db"},
		NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// handshake runs a TLS handshake over a pipe and returns the client's error.
func handshake(t *testing.T, server tls.Certificate, client *tls.Config) error {
	t.Helper()
	// A loopback TCP connection, not net.Pipe: a refused certificate makes
	// the client write an alert while the server may still be writing its
	// flight, and an unbuffered pipe then blocks both for good.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_ = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{server}}).Handshake()
	}()
	defer func() { <-done }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return tls.Client(c, client).Handshake()
}

// Each way a database certificate fails to verify is told in words with its
// fix; the right CA and host pass.
func TestTLSConfigVerifies(t *testing.T) {
	ca, other := newTestCA(t, "Test CA"), newTestCA(t, "Other CA")
	good := ca.server(t, time.Now().Add(24*time.Hour))
	expired := ca.server(t, time.Now().Add(-time.Hour))
	for _, tc := range []struct {
		name   string
		server tls.Certificate
		roots  *x509.CertPool
		host   string
		want   string // "" = success
	}{
		{"right CA", good, ca.pool, "127.0.0.1", ""},
		{"wrong CA", good, other.pool, "127.0.0.1", `untrusted authority ("Test CA"), not by one in source.ca_certificate`},
		{"no CA", good, nil, "127.0.0.1", "set source.ca_certificate"},
		{"wrong host", good, ca.pool, "db.example.com", `wrong host name: it names 127.0.0.1, not "db.example.com"`},
		{"expired", expired, ca.pool, "127.0.0.1", "has expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := TLSConfig(config.SourceTLS{Enabled: true, Roots: tc.roots, HostName: true}, tc.host)
			err := handshake(t, tc.server, cfg)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrTLSVerify) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrTLSVerify with %q", err, tc.want)
			}
		})
	}
	// verify-ca: the chain counts, the host name does not.
	cfg := TLSConfig(config.SourceTLS{Enabled: true, Roots: ca.pool}, "db.example.com")
	if err := handshake(t, good, cfg); err != nil {
		t.Fatalf("verify-ca: %v", err)
	}
}
