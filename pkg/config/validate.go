package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/pkg/webhook"
)

var (
	validName       = regexp.MustCompile(`^[a-z0-9_-]+$`)
	validTable      = regexp.MustCompile(`^[^.\s]+\.[^.\s]+$`)
	validRoleARN    = boundedPattern(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]+$`, 1, 512, afterRole)
	validExternalID = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
	validDynamoName = boundedPattern(`^[A-Za-z0-9_.-]+$`, 3, 255, nil)
)

// MaxMessageBytesLimit caps max_message_bytes (100 MiB): beyond it no broker
// setting makes sense for one row.
const MaxMessageBytesLimit = 100 << 20

// Validate checks every rule of docs/configuration.md and returns an *Errors
// listing all the problems found, or nil. It does not resolve references
// or apply defaults: Parse does both first; a Config built in code should
// call ApplyDefaults before Validate.
func (c *Config) Validate() error {
	var errs Errors
	c.validate(&errs)
	return errs.errOrNil()
}

func (c *Config) validate(errs *Errors) {
	v := validator{errs: errs, refs: c.references}
	v.name(c)
	v.source(c)
	v.snapshotMode(&c.Source)
	v.sourceTLS(&c.Source)
	v.destination(&c.Destination)
	v.sink(c)
	v.heartbeat(c)
	v.topicCreation(c)
	v.checkpoint(&c.Checkpoint)
	v.webhooks(&c.Webhooks)
	v.delivery(c)
	v.logging(c)
	v.format(c)
	v.transforms(c)
}

type validator struct {
	errs *Errors
	refs references
}

func (v validator) add(field, format string, args ...any) {
	v.errs.add(field, fmt.Sprintf(format, args...))
}

// quote is how a message shows field's value: quoted when the document
// has it as typed, never when it came through a reference (where secrets
// come from: a secret put in the wrong field must not be read back from
// the error).
func (v validator) quote(field, value string) string {
	if v.refs.fromReference(field) {
		return notShown
	}
	return strconv.Quote(value)
}

// plain is quote without the quotes, for values that read well bare
// (durations).
func (v validator) plain(field, value string) string {
	if v.refs.fromReference(field) {
		return notShown
	}
	return value
}

// notShown stands for a value that came through a reference.
const notShown = "the value its ${…} reference resolved to (not shown)"

func (v validator) name(c *Config) {
	switch {
	case c.Name == "":
		v.add("name", "required")
	case !validName.MatchString(c.Name):
		v.add("name", "%s; use lower-case letters, digits, '_' and '-'", v.badCharacter("name", c.Name, isNameChar))
	case slices.Contains(ReservedNames, c.Name):
		v.add("name", "%s is reserved: in AWS, /tributary/%s/ holds every pipeline's document, and a pipeline's secrets are /tributary/<name>/…; choose another name", c.Name, c.Name)
	}
}

func (v validator) source(c *Config) {
	s := &c.Source
	kind, known := sourceKind(s.Type)
	switch {
	case s.Type == "":
		v.add("source.type", "required: %s", sourceTypesText())
	case known:
	case s.Type == SourceSQLServer:
		v.add("source.type", "%s is not built in this release; use %s", s.Type, sourceTypesText())
	default:
		v.add("source.type", "must be %s", sourceTypesText())
	}

	// The URL may hold a password: messages describe it, never quote it
	// (url.Parse errors quote the whole URL). A kind checks its own URL
	// (and its own settings); any other type's must at least be a URL.
	switch {
	case s.URL == "":
		v.add("source.url", "required")
	case known:
		if kind.ValidateURL != nil {
			kind.ValidateURL(s.URL, Report{v})
		}
	default:
		if u, err := url.Parse(s.URL); err != nil {
			v.add("source.url", "%s", BadURL)
		} else if u.Scheme == "" || u.Opaque != "" {
			v.add("source.url", "must be a URL such as %s://user@host/database", urlScheme(s.Type))
		}
	}

	if s.OutageWindow != "" {
		if d, err := time.ParseDuration(s.OutageWindow); err != nil || d < time.Second || d > 24*time.Hour {
			v.add("source.outage_window", "must be a duration from 1s to 24h, such as 5m or 90s")
		}
	}
	if n := s.SnapshotParallelism; n < 0 || n > 64 {
		v.add("source.snapshot_parallelism", "must be from 1 to 64 (tables read at once; default 2), not %d", n)
	}

	s.selection(v)
	if known {
		v.foreignSources(s, kind, c.Name)
	}
	if known && kind.Validate != nil {
		kind.Validate(s, c.Name, Report{v})
	}
}

// BadURL is what a source.url that does not parse as a URL is told: the
// value is never quoted (it may hold a password).
const BadURL = "is not a valid URL (value not shown: it may hold a password); percent-encode special characters in the user name and password"

// urlScheme is the scheme a message shows for a source type without
// rules of its own.
func urlScheme(sourceType string) string {
	if sourceType == "" {
		if types := SourceTypes(); len(types) > 0 {
			return types[0]
		}
		return "scheme"
	}
	return sourceType
}

func (v validator) destination(d *Destination) {
	if strings.TrimSpace(d.BootstrapServers) == "" {
		v.add("destination.bootstrap_servers", "required: comma-separated host:port")
	} else {
		entries := strings.Split(d.BootstrapServers, ",")
		for i, e := range entries {
			if msg := checkHostPort(strings.TrimSpace(e)); msg != "" {
				v.add("destination.bootstrap_servers", "entry %d of %d %s", i+1, len(entries), msg)
			}
		}
	}

	if d.TopicPrefix == "" && d.Topic == "" {
		v.add("destination.topic_prefix", "required (or destination.topic: one topic for every table)")
	} else if bad := v.badCharacter("destination.topic_prefix", d.TopicPrefix, isTopicChar); bad != "" {
		v.add("destination.topic_prefix", "%s; use letters, digits, '.', '_' and '-' only", bad)
	}

	switch d.Authentication {
	case AuthNone:
	case AuthPlain, AuthSCRAMSHA256, AuthSCRAMSHA512:
		if d.Username == "" {
			v.add("destination.username", "required with authentication %s", d.Authentication)
		}
		if d.Password == "" {
			v.add("destination.password", "required with authentication %s", d.Authentication)
		}
	case AuthAWSMSKIAM:
		if d.AWSRegion == "" && os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
			v.add("destination.aws_region", "required with authentication AWS_MSK_IAM (or set AWS_REGION in the environment)")
		}
		if d.DisableTLS {
			v.add("destination.disable_tls", "not allowed with authentication AWS_MSK_IAM: MSK IAM listeners use TLS")
		}
	default:
		v.add("destination.authentication", "must be NONE, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM")
	}
	if d.AWSRoleARN != "" && !validRoleARN.MatchString(d.AWSRoleARN) {
		v.add("destination.aws_role_arn", "must be an IAM role ARN: arn:aws:iam::<12-digit account>:role/<name>")
	}
	if d.ExternalID != "" {
		if d.AWSRoleARN == "" {
			v.add("destination.external_id", "needs aws_role_arn: the external ID is passed when assuming that role")
		} else if len(d.ExternalID) < 2 || len(d.ExternalID) > 1224 || !validExternalID.MatchString(d.ExternalID) {
			v.add("destination.external_id", "must be 2 to 1224 characters of letters, digits and +=,.@:/-")
		}
	}

	v.tls(d)

	switch d.MessageCompression {
	case CompressionNone, CompressionGzip:
	default:
		v.add("destination.message_compression", "must be none or gzip")
	}
	if d.MaxMessageBytes <= 0 || d.MaxMessageBytes > MaxMessageBytesLimit {
		v.add("destination.max_message_bytes", "must be from 1 to %d (100 MiB)", MaxMessageBytesLimit)
	}
	switch d.DeleteMode {
	case DeleteRecord, DeleteTombstone, DeleteRecordAndTombstone:
	default:
		v.add("destination.delete_mode", "must be record, tombstone or record_and_tombstone")
	}

	if set(d.SSHTunnel) {
		v.add("destination.ssh_tunnel", "not supported: only direct connections to Kafka are supported (no SSH tunnels); make the brokers reachable from where Tributary runs")
	}
	if set(d.PrivateLink) {
		v.add("destination.private_link", "not supported: only direct connections to Kafka are supported (no PrivateLink); make the brokers reachable from where Tributary runs")
	}
}

// set reports whether a recognised-but-refused field asks for something:
// null and false ask for nothing.
func set(x any) bool {
	switch x := x.(type) {
	case nil:
		return false
	case bool:
		return x
	}
	return true
}

// checkHostPort returns what is wrong with one bootstrap server, or "".
func checkHostPort(hostport string) string {
	if hostport == "" {
		return "is empty"
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "must be host:port with a numeric port"
	}
	if host == "" {
		return "has no host"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "must have a numeric port from 1 to 65535"
	}
	return ""
}

// tls checks the certificate fields. Messages never quote PEM text: a key
// is a secret, and a certificate is noise in an error.
func (v validator) tls(d *Destination) {
	if d.DisableTLS {
		for _, f := range []struct{ field, value string }{
			{"destination.ca_certificate", d.CACertificate},
			{"destination.client_certificate", d.ClientCertificate},
			{"destination.client_key", d.ClientKey},
		} {
			if f.value != "" {
				v.add(f.field, "needs TLS, but disable_tls is true")
			}
		}
	}
	if d.CACertificate != "" {
		if msg := checkPEM(d.CACertificate, "CERTIFICATE"); msg != "" {
			v.add("destination.ca_certificate", "%s", msg)
		} else if !x509.NewCertPool().AppendCertsFromPEM([]byte(d.CACertificate)) {
			v.add("destination.ca_certificate", "holds no certificate that parses")
		}
	}
	certOK, keyOK := false, false
	if d.ClientCertificate != "" {
		if msg := checkPEM(d.ClientCertificate, "CERTIFICATE"); msg != "" {
			v.add("destination.client_certificate", "%s", msg)
		} else {
			certOK = true
		}
	}
	if d.ClientKey != "" {
		if msg := checkPEM(d.ClientKey, "PRIVATE KEY"); msg != "" {
			v.add("destination.client_key", "%s", msg)
		} else {
			keyOK = true
		}
	}
	switch {
	case d.ClientCertificate != "" && d.ClientKey == "":
		v.add("destination.client_key", "required with client_certificate (mutual TLS needs both)")
	case d.ClientKey != "" && d.ClientCertificate == "":
		v.add("destination.client_certificate", "required with client_key (mutual TLS needs both)")
	case certOK && keyOK:
		if _, err := tls.X509KeyPair([]byte(d.ClientCertificate), []byte(d.ClientKey)); err != nil {
			v.add("destination.client_key", "does not parse or does not match client_certificate")
		}
	}
}

// checkPEM returns what is wrong with PEM text that should hold a block
// whose type ends in kind ("CERTIFICATE", "PRIVATE KEY"), or "".
func checkPEM(text, kind string) string {
	if !strings.Contains(text, "-----BEGIN ") {
		return "must be PEM text (-----BEGIN " + kind + "-----…), not a file path"
	}
	rest := []byte(text)
	for {
		block, r := pem.Decode(rest)
		if block == nil {
			return "holds no PEM " + kind + " block that parses"
		}
		if strings.HasSuffix(block.Type, kind) {
			if kind == "CERTIFICATE" {
				if _, err := x509.ParseCertificate(block.Bytes); err != nil {
					return "holds a PEM certificate that does not parse"
				}
			}
			return ""
		}
		rest = r
	}
}

func (v validator) checkpoint(c *Checkpoint) {
	switch c.Store {
	case StoreFile:
		if c.Path == "" {
			v.add("checkpoint.path", "required with store file")
		}
	case StoreDynamoDB:
		if !validDynamoName.MatchString(c.Table) {
			v.add("checkpoint.table", "must be a DynamoDB table name: 3 to 255 letters, digits, '_', '-' and '.'")
		}
	default:
		v.add("checkpoint.store", "must be file or dynamodb")
	}
}

func (v validator) webhooks(w *Webhooks) {
	if w.RowSkippedURL != "" {
		if msg := checkHTTPURL(w.RowSkippedURL); msg != "" {
			v.add("webhooks.row_skipped_url", "%s", msg)
		} else if u, _ := url.Parse(w.RowSkippedURL); u.Scheme != "https" && !loopbackHost(u.Hostname()) {
			v.add("webhooks.row_skipped_url", "must be https:// (http:// only to a loopback host such as 127.0.0.1 or localhost, a receiver on the same machine): events and their signatures would cross the network in clear text")
		}
	}
	if w.RowSkippedURL != "" && w.SigningSecret == "" {
		v.add("webhooks.signing_secret", "required with row_skipped_url: every delivery is signed (whsec_<base64 of at least %d random bytes>, or a string of at least %d bytes)", webhook.MinSecretBytes, webhook.MinSecretBytes)
	}
	if w.SigningSecret != "" {
		// The same decoding as the deliveries' signing.
		key, err := webhook.SecretKey(w.SigningSecret)
		switch {
		case err != nil:
			v.add("webhooks.signing_secret", "a whsec_ secret must be followed by base64 (value not shown)")
		case len(key) < webhook.MinSecretBytes:
			v.add("webhooks.signing_secret", "is shorter than %d bytes (a whsec_ secret: its base64-decoded key); use at least %d random bytes, e.g. whsec_ followed by the output of openssl rand -base64 32 (value not shown)", webhook.MinSecretBytes, webhook.MinSecretBytes)
		}
	}
	if w.QueueURL != "" {
		if msg := checkHTTPURL(w.QueueURL); msg != "" {
			v.add("webhooks.queue_url", "%s", msg)
		}
	}
}

// loopbackHost reports whether host (a URL's, without brackets) is this
// machine: localhost, or a loopback IP address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// checkHTTPURL returns what is wrong with an http(s) URL, or "". Webhook
// URLs often carry a token, so the URL itself is not quoted.
func checkHTTPURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "is not a valid URL (value not shown)"
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http:// or https:// URL with a host"
	}
	return ""
}

func isNameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

func isTopicChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// badCharacter names the first character of s that ok refuses, or "". Only
// that one character is shown, never the value, and none when field's
// value came through a reference (a secret's character is the secret's).
func (v validator) badCharacter(field, s string, ok func(rune) bool) string {
	for _, r := range s {
		if !ok(r) {
			if v.refs.fromReference(field) {
				return "a character is not allowed (in " + notShown + ")"
			}
			return fmt.Sprintf("character %q is not allowed", r)
		}
	}
	return ""
}
