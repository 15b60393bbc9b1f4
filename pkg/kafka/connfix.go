package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The connection test's failures say the fix, naming the configuration
// key (docs/configuration.md), as the source checks do.

// TLS alerts a broker sends when it wants a client certificate or refuses
// the one it got (RFC 8446 section 6).
const (
	alertBadCertificate      = 42
	alertUnknownCA           = 48
	alertCertificateRequired = 116
)

// connFix is what to do about err, a failed connection or sign-in to a
// broker, or "": it follows describeConnErr's words after " — ".
func connFix(d Options, err error) string {
	var tlsErr *TLSError
	var dialErr *DialError
	var alert tls.AlertError
	var header tls.RecordHeaderError
	var firstEOF *kgo.ErrFirstReadEOF
	mech := d.Authentication
	switch {
	case errors.As(err, &alert) && (alert == alertBadCertificate || alert == alertCertificateRequired || alert == alertUnknownCA),
		// crypto/tls reports a peer's alert as an unexported type:
		// only its words tell.
		strings.Contains(err.Error(), "remote error: tls: bad certificate"),
		strings.Contains(err.Error(), "remote error: tls: certificate required"),
		strings.Contains(err.Error(), "remote error: tls: unknown certificate authority"):
		if d.ClientCertificate == "" {
			return " — the listener requires a client certificate (mutual TLS): set destination.client_certificate and destination.client_key"
		}
		return " — the broker refused destination.client_certificate: is it signed by a CA in the broker's trust store?"
	case errors.As(err, &tlsErr) && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.As(err, &header)):
		return " — the listener does not answer TLS: set `destination.disable_tls: true` if the listener is plaintext, or use the port of its TLS listener"
	case d.DisableTLS && strings.Contains(err.Error(), "is this a plaintext connection speaking to a tls endpoint"):
		// franz-go reads a TLS alert as a response size (pkg/kgo
		// broker.go), and says so in these words only.
		return " — the listener speaks TLS: remove destination.disable_tls (TLS is on by default), or use the port of a plaintext listener"
	case errors.As(err, &dialErr) && errors.Is(err, syscall.ECONNREFUSED):
		return " — nothing listens there: check the host and port in destination.bootstrap_servers and that the broker runs"
	case errors.Is(err, kerr.SaslAuthenticationFailed):
		return fmt.Sprintf(" — the username or password is wrong: check destination.username and destination.password (and that the user exists for %s)", mech)
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Sprintf(" — the listener does not enable %s: set destination.authentication to a mechanism of its sasl.enabled.mechanisms", mech)
	case errors.Is(err, kerr.IllegalSaslState):
		return fmt.Sprintf(" — the listener does not take SASL: set `destination.authentication: NONE` for it, or use the port of its SASL listener for %s", mech)
	case errors.As(err, &firstEOF) && (mech == "" || mech == AuthNone):
		fix := " — the listener requires SASL: set destination.authentication (with destination.username and destination.password), or use the port of a listener without it"
		if d.DisableTLS {
			fix += "; or it requires TLS: remove destination.disable_tls"
		}
		return fix
	}
	return ""
}

// aclFix is the command that grants ops (Describe, Write, Create) on the
// topics under prefix to the pipeline's principal, after a broker refused
// them with an authorization error.
func aclFix(d Options, prefix string, ops ...string) string {
	if d.Authentication == AuthAWSMSKIAM {
		var actions []string
		for _, op := range ops {
			actions = append(actions, "kafka-cluster:"+map[string]string{"Describe": "DescribeTopic", "Write": "WriteData", "Create": "CreateTopic"}[op])
		}
		return fmt.Sprintf(" — allow %s on arn:aws:kafka:<region>:<account>:topic/<cluster>/*/%s.* in the policy of destination.aws_role_arn",
			strings.Join(actions, ", "), prefix)
	}
	var flags []string
	for _, op := range ops {
		flags = append(flags, "--operation "+op)
	}
	seed := "<broker>"
	if s := SeedBrokers(d); len(s) > 0 {
		seed = s[0]
	}
	return fmt.Sprintf(" — grant it: kafka-acls.sh --bootstrap-server %s --command-config <admin.properties> --add --allow-principal %s %s --topic %s. --resource-pattern-type prefixed",
		seed, principal(d), strings.Join(flags, " "), prefix)
}

// principal is the Kafka principal the pipeline signs in as: User:<name>
// with SASL, the client certificate's subject with mutual TLS (Kafka's
// default SSL principal).
func principal(d Options) string {
	if d.Username != "" {
		return "User:" + d.Username
	}
	if b, _ := pem.Decode([]byte(d.ClientCertificate)); b != nil {
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			return "'User:" + c.Subject.String() + "'"
		}
	}
	return "User:<principal>"
}
