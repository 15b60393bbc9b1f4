package mongodb

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// testCert is a certificate and its key as PEM, signed by parent (self-
// signed when parent is nil).
type testCert struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

func newTestCert(t *testing.T, cn string, parent *testCert, isCA bool, usage x509.ExtKeyUsage) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
	}
	if !isCA {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
		tmpl.DNSNames = []string{cn}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})}
}

// handshake runs a TLS handshake between client (as the driver would use
// it, with the server's name) and a server presenting serverCert that
// requires a client certificate signed by clientCA; it returns the client
// certificate the server saw.
func handshake(t *testing.T, client *tls.Config, serverCert *testCert, clientCA *testCert) (*x509.Certificate, error) {
	t.Helper()
	pair, err := tls.X509KeyPair(serverCert.certPEM, serverCert.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(clientCA.cert)
	c, s := net.Pipe()
	srv := tls.Server(s, &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS12, SessionTicketsDisabled: true})
	var seen *x509.Certificate
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer s.Close()
		if srv.Handshake() == nil {
			if pc := srv.ConnectionState().PeerCertificates; len(pc) > 0 {
				seen = pc[0]
			}
		}
	}()
	cfg := client.Clone()
	cfg.ServerName = serverCert.cert.Subject.CommonName
	cl := tls.Client(c, cfg)
	err = cl.Handshake()
	_ = c.Close() // the raw pipe: a close_notify would wait for a reader
	wg.Wait()
	return seen, err
}

// The client certificate and CA from SSM make the TLS configuration the
// driver connects with: the certificate is presented (an X.509 sign-in,
// a server requiring one), the server is verified against the CA given,
// and a server certificate from another authority is refused.
func TestClientCertificateTLS(t *testing.T) {
	ca := newTestCert(t, "test ca", nil, true, 0)
	other := newTestCert(t, "other ca", nil, true, 0)
	server := newTestCert(t, "db.example", ca, false, x509.ExtKeyUsageServerAuth)
	impostor := newTestCert(t, "db.example", other, false, x509.ExtKeyUsageServerAuth)
	client := newTestCert(t, "tributary-x509", ca, false, x509.ExtKeyUsageClientAuth)

	conn, err := ParseConnection(Connection{URI: "mongodb://db.example:27017/?tls=true&authMechanism=MONGODB-X509",
		CAPEM: ca.certPEM, CertPEM: client.certPEM, KeyPEM: client.keyPEM})
	if err != nil {
		t.Fatal(err)
	}
	o, err := conn.clientOptions()
	if err != nil {
		t.Fatal(err)
	}
	tc := o.TLSConfig
	if tc == nil || tc.InsecureSkipVerify || len(tc.Certificates) != 1 || tc.RootCAs == nil || tc.MinVersion < tls.VersionTLS12 {
		t.Fatalf("TLS config %+v", tc)
	}
	if o.Auth == nil || o.Auth.AuthMechanism != "MONGODB-X509" {
		t.Fatalf("auth %+v", o.Auth)
	}
	seen, err := handshake(t, tc, server, ca)
	if err != nil {
		t.Fatalf("handshake with the server the CA signed: %v", err)
	}
	if seen == nil || seen.Subject.CommonName != "tributary-x509" {
		t.Fatalf("the server saw client certificate %v", seen)
	}
	if _, err := handshake(t, tc, impostor, ca); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("a server certificate from another authority: %v", err)
	}

	// Without a CA the system roots verify the server: the test CA is
	// not among them.
	noCA := Connection{CertPEM: client.certPEM, KeyPEM: client.keyPEM}
	tc, err = noCA.tlsConfig()
	if err != nil || tc.RootCAs != nil || len(tc.Certificates) != 1 {
		t.Fatalf("no CA: %+v %v", tc, err)
	}
	if _, err := handshake(t, tc, server, ca); err == nil {
		t.Fatal("a server of a private CA verified by the system roots")
	}
	if tc, err := (Connection{}).tlsConfig(); tc != nil || err != nil {
		t.Fatalf("nothing given: %+v %v", tc, err)
	}
}

// A key without its certificate, a certificate without its key and a
// key that is not the certificate's are refused, naming the field; the
// key's text is never in the message.
func TestClientCertificateRefusals(t *testing.T) {
	ca := newTestCert(t, "test ca", nil, true, 0)
	client := newTestCert(t, "tributary-x509", ca, false, x509.ExtKeyUsageClientAuth)
	stranger := newTestCert(t, "someone else", ca, false, x509.ExtKeyUsageClientAuth)
	for _, tc := range []struct {
		name string
		c    Connection
		want string
	}{
		{"key without certificate", Connection{KeyPEM: client.keyPEM}, "source.client_certificate: required with source.client_key"},
		{"certificate without key", Connection{CertPEM: client.certPEM}, "source.client_key: required with source.client_certificate"},
		{"another certificate's key", Connection{CertPEM: client.certPEM, KeyPEM: stranger.keyPEM}, "source.client_key: does not parse or does not match source.client_certificate"},
		{"a CA that is no PEM", Connection{CAPEM: []byte("not a certificate"), CertPEM: client.certPEM, KeyPEM: client.keyPEM}, "source.ca_certificate: no PEM certificate"},
	} {
		_, err := tc.c.tlsConfig()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		if body := strings.Split(string(stranger.keyPEM), "\n")[1]; strings.Contains(err.Error(), body) {
			t.Errorf("%s: the message quotes the key", tc.name)
		}
	}
}

// Every connection the driver opens goes through Connection.Dial (the
// connection-test function's guarded dialer): a dialer that refuses is
// the connection's error, and nothing is dialled another way. The
// commands and run report it as soon as every host has refused,
// not after the driver's 30 s of server selection.
func TestConnectDialsThroughDial(t *testing.T) {
	var mu sync.Mutex
	var dialled []string
	refuse := func(_ context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		dialled = append(dialled, addr)
		return nil, errors.New("address refused: a test dialer")
	}
	d, err := NewDriver(Config{Connection: Connection{URI: "mongodb://u:s3cr3t-pw@192.0.2.10:27017,192.0.2.11:27017/?replicaSet=rs0", Dial: refuse}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = d.Connect(t.Context())
	if err == nil || !strings.Contains(err.Error(), "no server of source.url could be dialled: address refused: a test dialer") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("connect: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(dialled)
	if dialled = slices.Compact(dialled); !slices.Equal(dialled, []string{"192.0.2.10:27017", "192.0.2.11:27017"}) {
		t.Fatalf("dialled %v", dialled)
	}
}

// The attempt ends early only once every host of source.url has refused:
// a replica set member the driver found by itself (not in the URL) that
// refuses does not end it, a host listed twice counts once, and a host
// without a port is the one dialled at 27017.
func TestRefusalsCountTheURLsHosts(t *testing.T) {
	refused := errors.New("refused")
	dialer := dialFunc(func(_ context.Context, _, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, "up") {
			return nil, nil
		}
		return nil, refused
	})
	for _, c := range []struct {
		hosts  []string
		dials  []string
		cancel bool
	}{
		{[]string{"up:27017"}, []string{"up:27017", "down:1", "down:2"}, false},
		{[]string{"down:1", "down:1"}, []string{"down:1"}, true},
		{[]string{"DOWN"}, []string{"down:27017"}, true},
		{[]string{"down:1", "down:2"}, []string{"down:1", "down:1"}, false},
		{[]string{"down:1", "down:2"}, []string{"down:1", "up:27017", "down:2"}, false},
		{[]string{"down:1", "down:2"}, []string{"down:1", "down:2"}, true},
		{[]string{"[::1]:1", "down"}, []string{"[::1]:1", "down:27017"}, true},
	} {
		var cause error
		d := refusals(dialer, c.hosts, func(err error, _ time.Duration) { cause = err })
		for _, a := range c.dials {
			_, _ = d(t.Context(), "tcp", a)
		}
		if (cause != nil) != c.cancel {
			t.Errorf("hosts %v, dials %v: cancelled %v (%v), want %v", c.hosts, c.dials, cause != nil, cause, c.cancel)
		}
		if cause != nil && !errors.Is(cause, refused) {
			t.Errorf("hosts %v: the cause %v does not wrap the dial's error", c.hosts, cause)
		}
	}
}

// Once connected, a member the driver reached keeps the deployment up
// while the URL's one seed refuses (a replica set's failover); when every
// server reached so far refuses, the stream's read ends at once.
func TestRefusalsAfterConnecting(t *testing.T) {
	down := map[string]bool{}
	dialer := dialFunc(func(_ context.Context, _, addr string) (net.Conn, error) {
		if down[addr] {
			return nil, errors.New("refused")
		}
		return nil, nil
	})
	var lost error
	var streak time.Duration
	d := refusals(dialer, []string{"seed:27017"}, func(err error, s time.Duration) { lost, streak = err, s })
	dial := func(addrs ...string) {
		for _, a := range addrs {
			_, _ = d(t.Context(), "tcp", a)
		}
	}
	dial("seed:27017", "member:27017")
	down["seed:27017"] = true
	dial("seed:27017", "seed:27017")
	if lost != nil {
		t.Fatalf("the seed down while a member it led to is up: %v", lost)
	}
	down["member:27017"] = true
	time.Sleep(20 * time.Millisecond)
	dial("member:27017")
	if lost == nil {
		t.Fatal("every server reached refuses, and the read goes on")
	}
	// The streak runs from the first failure since the last success,
	// for the stream's grace (guard).
	if streak < 20*time.Millisecond {
		t.Errorf("refusing for %v, want at least since the seed's first refusal (20 ms)", streak)
	}
	// The error says when: the outage counts from the first refusal.
	if now := time.Now(); now.Sub(source.LostAt(lost, now)) < 20*time.Millisecond {
		t.Errorf("the loss dated %v ago, want at least since the seed's first refusal (20 ms)", now.Sub(source.LostAt(lost, now)))
	}
}

// A guarded read ends only once every server has refused for its grace:
// shorter refusals (a blip) leave it to the driver.
func TestGuardWaitsItsGrace(t *testing.T) {
	d := &Driver{}
	ctx, end := d.guard(t.Context(), 50*time.Millisecond)
	defer end()
	refused := errors.New("refused")
	(*d.refused.Load())(refused, 10*time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("ended by refusals shorter than the grace")
	}
	(*d.refused.Load())(refused, 60*time.Millisecond)
	if !errors.Is(context.Cause(ctx), refused) {
		t.Fatalf("after the grace: cause %v, want the refusal", context.Cause(ctx))
	}
	end()
	if d.refused.Load() != nil {
		t.Error("the guard stays registered after its end")
	}
}
