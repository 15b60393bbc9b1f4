package kafka

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestMSKIAMOutlivesCredentials proves that a producer signing in with
// AWS_MSK_IAM keeps publishing across several sets of assumed-role
// credentials, each used only while it is valid.
//
// There is no MSK here, and a real broker cannot tell us what a client
// signed with, so the broker is kfake with its SASL exchange taken over by
// ControlKey: it accepts only OAUTHBEARER, and checks each token the way
// MSK does (a SigV4-presigned kafka-cluster:Connect URL whose signature
// verifies with the credentials STS issued, still unexpired). Like MSK it
// answers with a session lifetime no longer than the credentials' remaining
// life, so franz-go signs in again, with a fresh token, before it ends.
//
// STS is the AWS emulator (moto), reached through a recording proxy that
// sees every AssumeRole call: its role, external ID and duration, and the
// credentials returned. STS requires sessions of at least 15 minutes; moto
// honours any DurationSeconds, so the test asks for credLife and lets the
// cache renew them credWindow before they expire (assumeRoleTiming, the
// only test hook; everything else is the production path).
func TestMSKIAMOutlivesCredentials(t *testing.T) {
	awstest.Env(t)
	sts := newSTSRecorder(t, awstest.Endpoint)
	t.Setenv("AWS_ENDPOINT_URL", sts.URL())

	const (
		credLife   = 4 * time.Second
		credWindow = 2 * time.Second
		runFor     = 2*credLife + time.Second // more than two credential lifetimes
		roleARN    = "arn:aws:iam::123456789012:role/tributary-writer"
		externalID = "ext-7f3a"
	)
	saved := assumeRoleTiming
	assumeRoleTiming.duration, assumeRoleTiming.expiryWindow = credLife, credWindow
	t.Cleanup(func() { assumeRoleTiming = saved })

	cert, caPEM := selfSignedCert(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "iam"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	broker := &mskBroker{sts: sts, region: "us-east-1", roleARN: roleARN, externalID: externalID, maxSession: 2 * time.Second}
	broker.install(c)

	d := Options{
		BootstrapServers: c.ListenAddrs()[0],
		Authentication:   AuthAWSMSKIAM,
		AWSRoleARN:       roleARN,
		ExternalID:       externalID,
		AWSRegion:        "us-east-1",
		CACertificate:    caPEM,
		MaxMessageBytes:  1 << 20,
	}
	p, err := NewProducer(d)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	ctx, cancel := context.WithTimeout(context.Background(), runFor+15*time.Second)
	defer cancel()
	var produced, acked atomic.Int64
	var errMu sync.Mutex
	var produceErrs []error
	start := time.Now()
	for time.Since(start) < runFor {
		produced.Add(1)
		rec := &kgo.Record{Topic: "iam", Key: []byte("k"), Value: []byte(strconv.FormatInt(produced.Load(), 10))}
		p.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				errMu.Lock()
				produceErrs = append(produceErrs, err)
				errMu.Unlock()
				return
			}
			acked.Add(1)
		})
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	elapsed := time.Since(start)

	errMu.Lock()
	if len(produceErrs) > 0 {
		t.Errorf("%d of %d records failed; first: %v", len(produceErrs), produced.Load(), produceErrs[0])
	}
	errMu.Unlock()
	if acked.Load() != produced.Load() {
		t.Errorf("%d of %d records acknowledged", acked.Load(), produced.Load())
	}

	broker.mu.Lock()
	defer broker.mu.Unlock()
	if len(broker.rejected) > 0 {
		t.Errorf("broker refused %d sign-ins; first: %v", len(broker.rejected), broker.rejected[0])
	}
	keys := map[string]int{}
	for _, a := range broker.accepted {
		keys[a.accessKey]++
	}
	calls := sts.assumed()
	for _, call := range calls {
		if call.roleARN != roleARN || call.externalID != externalID || call.duration != strconv.Itoa(int(credLife/time.Second)) {
			t.Errorf("AssumeRole(RoleArn %q, ExternalId %q, DurationSeconds %s), want (%q, %q, %d)",
				call.roleARN, call.externalID, call.duration, roleARN, externalID, int(credLife/time.Second))
		}
	}
	reauths := len(broker.accepted) - broker.connections
	t.Logf("%s: %d of %d records acknowledged; %d sign-ins accepted (%d connections, %d re-authentications) with %d credential sets from %d AssumeRole calls (credentials live %s, renewed %s early)",
		elapsed.Round(100*time.Millisecond), acked.Load(), produced.Load(), len(broker.accepted), broker.connections, reauths, len(keys), len(calls), credLife, credWindow)
	if reauths < 2 {
		t.Errorf("%d re-authentications of open connections, want at least 2", reauths)
	}
	// A run of more than two lifetimes, renewing at half-life, sees at
	// least three sets; two would already prove a refresh.
	if len(keys) < 3 {
		t.Errorf("sign-ins used %d credential sets (%v), want at least 3 over %s", len(keys), keys, elapsed)
	}

	// The checks above are only as good as the broker's verification: it
	// must refuse a forged signature and credentials past their expiry.
	last := broker.accepted[len(broker.accepted)-1]
	forged := bytes.Replace(last.saslBytes, []byte(last.token), []byte(forgeSignature(t, last.token)), 1)
	if _, err := broker.verify(forged, last.at); err == nil || !strings.Contains(err.Error(), "signature") {
		t.Errorf("forged signature: err %v, want a signature mismatch", err)
	}
	cred, _ := sts.lookup(last.accessKey)
	if _, err := broker.verify(last.saslBytes, cred.expiration.Add(time.Second)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("token presented after its credentials expired: err %v, want a refusal", err)
	}
}

// mskBroker answers the SASL requests of a kfake cluster as MSK's IAM
// listener does.
type mskBroker struct {
	sts                 *stsRecorder
	region              string
	roleARN, externalID string
	maxSession          time.Duration // connections.max.reauth.ms

	mu          sync.Mutex
	connections int
	accepted    []signIn
	rejected    []error
}

type signIn struct {
	at        time.Time
	accessKey string
	token     string
	saslBytes []byte
}

func (b *mskBroker) install(c *kfake.Cluster) {
	// franz-go opens every connection with ApiVersions, so sign-ins beyond
	// that count are re-authentications of open connections (KIP-368).
	c.ControlKey(int16(kmsg.ApiVersions), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		b.mu.Lock()
		b.connections++
		b.mu.Unlock()
		return nil, nil, false
	})
	c.ControlKey(int16(kmsg.SASLHandshake), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.SASLHandshakeRequest)
		resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"OAUTHBEARER"}
		if r.Mechanism != "OAUTHBEARER" {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
			b.reject(fmt.Errorf("mechanism %s", r.Mechanism))
		}
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		r := req.(*kmsg.SASLAuthenticateRequest)
		resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		in, err := b.verify(r.SASLAuthBytes, time.Now())
		if err != nil {
			b.reject(err)
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			msg := err.Error()
			resp.ErrorMessage = &msg
			return resp, nil, true
		}
		cred, _ := b.sts.lookup(in.accessKey)
		resp.SessionLifetimeMillis = min(b.maxSession, time.Until(cred.expiration)).Milliseconds()
		b.mu.Lock()
		b.accepted = append(b.accepted, in)
		b.mu.Unlock()
		return resp, nil, true
	})
}

func (b *mskBroker) reject(err error) {
	b.mu.Lock()
	b.rejected = append(b.rejected, err)
	b.mu.Unlock()
}

// verify checks an OAUTHBEARER client message holding an MSK IAM token
// (aws-msk-iam-sasl-signer-go: base64url, unpadded, of a presigned URL) as
// of now: the URL, the action, the credential scope, that the credentials
// are ones STS issued for the role with the external ID and have not
// expired, and the SigV4 signature.
func (b *mskBroker) verify(sasl []byte, now time.Time) (signIn, error) {
	token, err := bearerToken(sasl)
	if err != nil {
		return signIn{}, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return signIn{}, fmt.Errorf("token is not unpadded base64url: %v", err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		return signIn{}, fmt.Errorf("token is not a URL: %v", err)
	}
	q := u.Query()
	if u.Scheme != "https" || u.Host != "kafka."+b.region+".amazonaws.com" || u.Path != "/" {
		return signIn{}, fmt.Errorf("token URL %s://%s%s", u.Scheme, u.Host, u.Path)
	}
	if a := q.Get("Action"); a != "kafka-cluster:Connect" {
		return signIn{}, fmt.Errorf("action %q", a)
	}
	if a := q.Get("X-Amz-Algorithm"); a != "AWS4-HMAC-SHA256" {
		return signIn{}, fmt.Errorf("algorithm %q", a)
	}
	signedAt, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return signIn{}, fmt.Errorf("X-Amz-Date: %v", err)
	}
	expires, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || expires <= 0 || expires > 900 {
		return signIn{}, fmt.Errorf("X-Amz-Expires %q", q.Get("X-Amz-Expires"))
	}
	if now.After(signedAt.Add(time.Duration(expires) * time.Second)) {
		return signIn{}, fmt.Errorf("token expired at %s", signedAt.Add(time.Duration(expires)*time.Second))
	}
	scope := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(scope) != 5 || scope[1] != signedAt.Format("20060102") || scope[2] != b.region || scope[3] != "kafka-cluster" || scope[4] != "aws4_request" {
		return signIn{}, fmt.Errorf("credential scope %q", q.Get("X-Amz-Credential"))
	}
	cred, ok := b.sts.lookup(scope[0])
	if !ok {
		return signIn{}, fmt.Errorf("access key %s was not issued by AssumeRole", scope[0])
	}
	if cred.roleARN != b.roleARN || cred.externalID != b.externalID {
		return signIn{}, fmt.Errorf("access key %s is for role %s with external ID %q", scope[0], cred.roleARN, cred.externalID)
	}
	if q.Get("X-Amz-Security-Token") != cred.sessionToken {
		return signIn{}, errors.New("X-Amz-Security-Token is not the session token of the access key")
	}
	if !now.Before(cred.expiration) {
		return signIn{}, fmt.Errorf("credentials %s expired at %s", scope[0], cred.expiration)
	}
	// Re-sign what the client signed (the signer adds User-Agent after
	// signing) and compare.
	req, _ := http.NewRequest(http.MethodGet, "https://"+u.Host+"/?"+url.Values{
		"Action": {"kafka-cluster:Connect"}, "X-Amz-Expires": {q.Get("X-Amz-Expires")},
	}.Encode(), nil)
	empty := sha256.Sum256(nil)
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{
		AccessKeyID: scope[0], SecretAccessKey: cred.secret, SessionToken: cred.sessionToken,
	}, req, hex.EncodeToString(empty[:]), "kafka-cluster", b.region, signedAt)
	if err != nil {
		return signIn{}, err
	}
	want, _ := url.Parse(signed)
	if got := q.Get("X-Amz-Signature"); got == "" || got != want.Query().Get("X-Amz-Signature") {
		return signIn{}, errors.New("signature does not verify with the access key's secret")
	}
	return signIn{at: now, accessKey: scope[0], token: token, saslBytes: sasl}, nil
}

// bearerToken returns the token of an RFC 7628 client message:
// gs2-header \x01 "auth=Bearer " token \x01 [extensions \x01] \x01.
func bearerToken(msg []byte) (string, error) {
	header, rest, ok := strings.Cut(string(msg), "\x01")
	if !ok || !strings.HasPrefix(header, "n,") {
		return "", errors.New("not an OAUTHBEARER client message")
	}
	for _, kv := range strings.Split(rest, "\x01") {
		if tok, ok := strings.CutPrefix(kv, "auth=Bearer "); ok && tok != "" {
			return tok, nil
		}
	}
	return "", errors.New("no bearer token")
}

// forgeSignature returns token with one hex digit of X-Amz-Signature changed.
func forgeSignature(t *testing.T, token string) string {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(string(raw))
	q := u.Query()
	sig := []byte(q.Get("X-Amz-Signature"))
	if sig[0] == '0' {
		sig[0] = '1'
	} else {
		sig[0] = '0'
	}
	q.Set("X-Amz-Signature", string(sig))
	u.RawQuery = q.Encode()
	return base64.RawURLEncoding.EncodeToString([]byte(u.String()))
}

// stsRecorder is a reverse proxy in front of the AWS emulator that keeps
// every AssumeRole request and the credentials it returned.
type stsRecorder struct {
	srv *httptest.Server

	mu    sync.Mutex
	calls []assumeRoleCall
}

type assumeRoleCall struct {
	roleARN, externalID, duration   string
	accessKey, secret, sessionToken string
	expiration                      time.Time
}

func newSTSRecorder(t *testing.T, target string) *stsRecorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &stsRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		form := resp.Request.Context().Value(formKey{}).(url.Values)
		if form.Get("Action") != "AssumeRole" || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var out struct {
			Creds struct {
				AccessKeyID     string    `xml:"AccessKeyId"`
				SecretAccessKey string    `xml:"SecretAccessKey"`
				SessionToken    string    `xml:"SessionToken"`
				Expiration      time.Time `xml:"Expiration"`
			} `xml:"AssumeRoleResult>Credentials"`
		}
		if err := xml.Unmarshal(body, &out); err != nil {
			return fmt.Errorf("AssumeRole response: %w", err)
		}
		r.mu.Lock()
		r.calls = append(r.calls, assumeRoleCall{
			roleARN: form.Get("RoleArn"), externalID: form.Get("ExternalId"), duration: form.Get("DurationSeconds"),
			accessKey: out.Creds.AccessKeyID, secret: out.Creds.SecretAccessKey,
			sessionToken: out.Creds.SessionToken, expiration: out.Creds.Expiration,
		})
		r.mu.Unlock()
		return nil
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		req.Header.Del("Accept-Encoding") // keep the response readable
		proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), formKey{}, form)))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

type formKey struct{}

func (r *stsRecorder) URL() string { return r.srv.URL }

func (r *stsRecorder) assumed() []assumeRoleCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]assumeRoleCall(nil), r.calls...)
}

func (r *stsRecorder) lookup(accessKey string) (assumeRoleCall, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.calls {
		if c.accessKey == accessKey {
			return c, true
		}
	}
	return assumeRoleCall{}, false
}

// selfSignedCert returns a certificate for 127.0.0.1 and its PEM, which
// serves as the CA that verifies it.
func selfSignedCert(t *testing.T) (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kfake"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
