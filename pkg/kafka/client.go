// Package kafka turns a destination config into franz-go clients: the
// authentication and TLS options, the producer with Tributary's delivery
// settings, and topic checks and creation.
package kafka

import (
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

	"github.com/tributary-cdc/tributary/pkg/config"
)

// ClientOpts returns the connection options (seeds, TLS, SASL) for d.
func ClientOpts(d config.Destination) ([]kgo.Opt, error) {
	var seeds []string
	for _, s := range strings.Split(d.BootstrapServers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID("tributary"),
		kgo.Dialer((&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext),
	}
	if !d.DisableTLS {
		cfg, err := tlsConfig(d)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	switch d.Authentication {
	case "", "NONE":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: d.Username, Pass: d.Password}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: d.Username, Pass: d.Password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: d.Username, Pass: d.Password}.AsSha512Mechanism()))
	case "AWS_MSK_IAM":
		return nil, errors.New("destination.authentication: AWS_MSK_IAM is not available in this build yet")
	default:
		return nil, fmt.Errorf("destination.authentication: unknown mechanism %q", d.Authentication)
	}
	return opts, nil
}

// tlsConfig verifies brokers against ca_certificate (replacing the system
// roots) or the system roots; verification is never disabled.
func tlsConfig(d config.Destination) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if d.CACertificate != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(d.CACertificate)) {
			return nil, errors.New("destination.ca_certificate: no PEM certificate found")
		}
		cfg.RootCAs = pool
	}
	if d.ClientCertificate != "" || d.ClientKey != "" {
		cert, err := tls.X509KeyPair([]byte(d.ClientCertificate), []byte(d.ClientKey))
		if err != nil {
			// The error text of X509KeyPair does not include key material.
			return nil, fmt.Errorf("destination.client_certificate/client_key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
