// Package kafka owns the wire to the cluster: from its own Options it makes
// franz-go clients (authentication and TLS), the producer with Tributary's
// delivery settings, whose Publish turns a message into the record sent
// (gzip, headers, partition, the size limit on the final bytes), topic
// checks and creation, transactions with the exactly-once offsets record,
// and the connection test. It reads no configuration document
// (pkg/destination builds Options from one) and no checkpoint store.
//
// It promises that certificate verification is never switched off and that
// no error or log line it produces holds a password, key or token.
package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// DialFunc dials one broker address ("host:port"). It is the hook for
// callers that must refuse some addresses (the connection-test Lambda
// refuses link-local ones) or that test faults.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// dialTimeout bounds one TCP connect; TLS and SASL are bounded by the
// request timeouts that follow.
const dialTimeout = 10 * time.Second

// defaultDial is a plain TCP connect bounded by dialTimeout.
func defaultDial(ctx context.Context, network, addr string) (net.Conn, error) {
	return (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
}

// ClientOpts returns the connection options (seeds, TLS, SASL) for d.
func ClientOpts(d Options) ([]kgo.Opt, error) {
	return clientOpts(d, nil)
}

// clientOpts is ClientOpts with an optional dial function (nil: a plain
// TCP dialer with dialTimeout).
func clientOpts(d Options, dial DialFunc) ([]kgo.Opt, error) {
	seeds := SeedBrokers(d)
	if len(seeds) == 0 {
		return nil, errors.New("destination.bootstrap_servers: required: comma-separated host:port")
	}
	if dial == nil {
		dial = defaultDial
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("tributary"),
	}
	if d.DisableTLS {
		if d.Authentication == AuthAWSMSKIAM {
			return nil, errors.New("destination.disable_tls: not allowed with authentication AWS_MSK_IAM: MSK IAM listeners use TLS")
		}
		opts = append(opts, kgo.Dialer(plainDialer(dial)))
	} else {
		cfg, err := tlsConfig(d)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.Dialer(tlsDialer(dial, cfg)))
	}
	switch d.Authentication {
	case "", AuthNone:
	case AuthPlain:
		opts = append(opts, kgo.SASL(plain.Auth{User: d.Username, Pass: d.Password}.AsMechanism()))
	case AuthSCRAMSHA256:
		opts = append(opts, kgo.SASL(scram.Auth{User: d.Username, Pass: d.Password}.AsSha256Mechanism()))
	case AuthSCRAMSHA512:
		opts = append(opts, kgo.SASL(scram.Auth{User: d.Username, Pass: d.Password}.AsSha512Mechanism()))
	case AuthAWSMSKIAM:
		mech, err := mskIAMMechanism(d)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(mech))
	default:
		return nil, fmt.Errorf("destination.authentication: unknown mechanism %q (want NONE, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM)", d.Authentication)
	}
	return opts, nil
}

// SeedBrokers splits destination.bootstrap_servers.
func SeedBrokers(d Options) []string {
	var seeds []string
	for _, s := range strings.Split(d.BootstrapServers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// tlsConfig verifies brokers against ca_certificate (replacing the system
// roots) or the system roots; verification is never disabled.
func tlsConfig(d Options) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if d.CACertificate != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(d.CACertificate)) {
			return nil, errors.New("destination.ca_certificate: no PEM certificate found")
		}
		cfg.RootCAs = pool
	}
	switch {
	case d.ClientCertificate != "" && d.ClientKey == "":
		return nil, errors.New("destination.client_key: required with client_certificate (mutual TLS needs both)")
	case d.ClientKey != "" && d.ClientCertificate == "":
		return nil, errors.New("destination.client_certificate: required with client_key (mutual TLS needs both)")
	case d.ClientCertificate != "":
		cert, err := tls.X509KeyPair([]byte(d.ClientCertificate), []byte(d.ClientKey))
		if err != nil {
			// The error text of X509KeyPair does not include key material.
			return nil, fmt.Errorf("destination.client_certificate/client_key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// tlsDialer dials with dial and then shakes hands, naming the server from
// the address as kgo's own TLS dialer does. A handshake failure says which
// broker refused and why, so an untrusted certificate reads as such rather
// than as an unreachable broker.
func tlsDialer(dial DialFunc, base *tls.Config) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &DialError{Addr: addr, Err: err}
		}
		cfg := base.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
		conn := tls.Client(raw, cfg)
		hctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		if err := conn.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, &TLSError{Addr: addr, Err: err}
		}
		return conn, nil
	}
}

// plainDialer marks dial failures as DialError.
func plainDialer(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &DialError{Addr: addr, Err: err}
		}
		return conn, nil
	}
}

// DialError is a failed TCP connect to a broker: the broker is unreachable.
type DialError struct {
	Addr string
	Err  error
}

func (e *DialError) Error() string { return fmt.Sprintf("dial %s: %v", e.Addr, e.Err) }
func (e *DialError) Unwrap() error { return e.Err }

// TLSError is a failed TLS handshake with a broker, for example a server
// certificate that does not verify against destination.ca_certificate or
// the system roots, or a client certificate the broker refused.
type TLSError struct {
	Addr string
	Err  error
}

func (e *TLSError) Error() string {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.As(e.Err, &unknown):
		return fmt.Sprintf("TLS handshake with %s: the broker's certificate is not signed by a trusted CA (set destination.ca_certificate to the CA that signed it): %v", e.Addr, e.Err)
	case errors.As(e.Err, &hostname):
		return fmt.Sprintf("TLS handshake with %s: the broker's certificate is not valid for this address: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("TLS handshake with %s: %v", e.Addr, e.Err)
}

func (e *TLSError) Unwrap() error { return e.Err }
