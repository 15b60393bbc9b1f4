package itest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// The secured listeners of integration/services/kafka.sh: SASL_SSL with
// PLAIN and SCRAM users, and SSL requiring a client certificate, both
// signed by a test CA the script makes in .services/kafka/tls. The users
// may use topics named sec.* only (writer: describe and write; creator and
// the mutual-TLS principal tributary-client: also create).
const (
	KafkaSASLAddr = "127.0.0.1:9094"
	KafkaMTLSAddr = "127.0.0.1:9095"
	ACLPrefix     = "sec."
)

var SASLUsers = map[string]string{"writer": "writer-secret", "creator": "creator-secret"}

func TLSFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", ".services", "kafka", "tls", name))
	if err != nil {
		t.Fatalf("read test TLS material (run `make services-up`, and restart Kafka if it predates the secured listeners): %v", err)
	}
	return string(b)
}

// SecPrefix is a topic prefix of this test run under the ACL prefix.
func SecPrefix(label string) string {
	return ACLPrefix + UniqueName(label)
}

// SASLDest is a destination on the SASL_SSL listener.
func SASLDest(t *testing.T, mech, user, pass string) kafka.Options {
	return kafka.Options{
		BootstrapServers: KafkaSASLAddr,
		Authentication:   mech,
		Username:         user,
		Password:         pass,
		CACertificate:    TLSFile(t, "ca.pem"),
		MaxMessageBytes:  config.DefaultMaxMessageBytes,
	}
}

// MTLSDest is a destination on the mutual-TLS listener.
func MTLSDest(t *testing.T) kafka.Options {
	return kafka.Options{
		BootstrapServers:  KafkaMTLSAddr,
		Authentication:    kafka.AuthNone,
		CACertificate:     TLSFile(t, "ca.pem"),
		ClientCertificate: TLSFile(t, "client.pem"),
		ClientKey:         TLSFile(t, "client.key"),
		MaxMessageBytes:   config.DefaultMaxMessageBytes,
	}
}

// OtherCA is a fresh CA that signed nothing the broker holds.
func OtherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Some other CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
