package source

import (
	"crypto/tls"
	"encoding/pem"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// dialTLS returns the client side of a finished handshake with a server
// presenting server (a loopback TCP connection, as handshake explains).
func dialTLS(t *testing.T, server tls.Certificate, client *tls.Config) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{server}})
		if s.Handshake() == nil {
			io.Copy(io.Discard, s) // until the client closes
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if client == nil {
		return c
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	tc := tls.Client(c, client)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	return tc
}

// test-connection's TLS line says "no TLS" for a plaintext connection,
// and otherwise the version and what the certificate was verified against,
// including when it was not verified at all.
func TestTLSState(t *testing.T) {
	ca := newTestCA(t, "Test CA")
	good := ca.server(t, time.Now().Add(24*time.Hour))
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
	pg := func(mode, ca string) *config.Source {
		return &config.Source{Type: config.SourcePostgres, URL: "postgres://u@127.0.0.1/db?sslmode=" + mode, CACertificate: ca}
	}
	for _, tc := range []struct {
		name   string
		src    *config.Source
		driver *tls.Config // the connection's TLS configuration; nil: plaintext
		want   string
	}{
		{"plaintext", pg("disable", ""), nil, "no TLS"},
		{"source.ca_certificate", pg("verify-full", caPEM),
			TLSConfig(config.SourceTLS{Enabled: true, Roots: ca.pool, HostName: true}, "127.0.0.1"),
			"TLS 1.3, certificate verified against source.ca_certificate, host name checked"},
		{"sslmode=require", pg("require", ""), &tls.Config{InsecureSkipVerify: true},
			"TLS 1.3, certificate NOT verified"},
		{"driver verify-full with sslrootcert", pg("verify-full&sslrootcert=/ca.pem", ""),
			&tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1"},
			"TLS 1.3, certificate verified against the URL's sslrootcert, host name checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := TLSState(dialTLS(t, good, tc.driver), tc.src, tc.driver)
			if !c.OK || c.Name != "source TLS" || !strings.HasPrefix(c.Detail, tc.want) {
				t.Fatalf("got %+v, want OK with detail starting %q", c, tc.want)
			}
		})
	}
}
