package postgres

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/config"
)

func testCAPEM(t *testing.T) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// With source.ca_certificate, every host of the URL gets our verifying TLS
// configuration and the plaintext fallback of the default sslmode=prefer is
// gone: a server without TLS is never talked to in clear.
func TestApplyTLSRequiresVerifiedTLS(t *testing.T) {
	ca := testCAPEM(t)
	for _, url := range []string{
		"postgres://u@db1:5432/shop",                        // sslmode=prefer: TLS, then plaintext
		"postgres://u@db1:5432,db2:5433/shop?sslmode=allow", // plaintext first
		"postgres://u@db1/shop?sslmode=require",
	} {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		if err := applyTLS(cfg, &config.Source{Type: config.SourcePostgres, URL: url, CACertificate: ca}); err != nil {
			t.Fatal(err)
		}
		if cfg.TLSConfig == nil || cfg.TLSConfig.VerifyConnection == nil || cfg.TLSConfig.ServerName != cfg.Host {
			t.Fatalf("%s: primary TLS config %+v", url, cfg.TLSConfig)
		}
		for _, fb := range cfg.Fallbacks {
			if fb.TLSConfig == nil || fb.TLSConfig.VerifyConnection == nil || fb.TLSConfig.ServerName != fb.Host {
				t.Fatalf("%s: fallback %s:%d without our TLS", url, fb.Host, fb.Port)
			}
		}
	}

	// Without certificate fields and a verify mode, pgx's settings stay.
	cfg, _ := pgx.ParseConfig("postgres://u@db1/shop?sslmode=disable")
	if err := applyTLS(cfg, &config.Source{Type: config.SourcePostgres, URL: "postgres://u@db1/shop?sslmode=disable"}); err != nil || cfg.TLSConfig != nil {
		t.Fatalf("sslmode=disable changed: %v %+v", err, cfg.TLSConfig)
	}
}
