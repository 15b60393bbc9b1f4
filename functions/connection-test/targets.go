package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// The function serves every pipeline with one role, which may assume
// every pipeline's writer role, and connects wherever a document says.
// A document's author is trusted with that pipeline only, so what the
// document may not decide comes from the stack (infra/dataplane.go):
// which writer role the pipeline signs in with, and (when the operator
// lists them) which hosts its test may connect to. Its secrets leave the
// function only over TLS.

// targets is what the stack binds each pipeline to.
type targets struct {
	// writers is pipeline → the only writer role its test may assume;
	// a pipeline not in it assumes none.
	writers map[string]string
	// hosts is pipeline → the brokers, database and schema registry
	// hosts its test may connect to (host names, *.domain, IP addresses,
	// CIDR ranges); a pipeline not in it may connect to any host.
	hosts map[string][]string
	// plaintextLoopback lets a database or registry password go to a
	// loopback address without TLS: for the tests, whose databases and
	// registry listen on 127.0.0.1 without TLS. The function's dialer
	// refuses loopback anyway.
	plaintextLoopback bool
}

// targetsFromEnvironment reads PIPELINE_WRITER_ROLES
// (<pipeline>=<role ARN>,…) and PIPELINE_ALLOWED_HOSTS
// ({"<pipeline>":["<host>",…]}), both written by the stack.
func targetsFromEnvironment() (targets, error) {
	t := targets{writers: map[string]string{}, hosts: map[string][]string{}}
	for _, b := range strings.Split(os.Getenv("PIPELINE_WRITER_ROLES"), ",") {
		if b = strings.TrimSpace(b); b == "" {
			continue
		}
		name, arn, ok := strings.Cut(b, "=")
		if !ok || !pipelineName.MatchString(name) || !strings.HasPrefix(arn, "arn:") {
			return t, fmt.Errorf("PIPELINE_WRITER_ROLES: want <pipeline>=<role ARN>,…")
		}
		t.writers[name] = arn
	}
	if s := os.Getenv("PIPELINE_ALLOWED_HOSTS"); s != "" {
		if err := json.Unmarshal([]byte(s), &t.hosts); err != nil {
			return t, fmt.Errorf("PIPELINE_ALLOWED_HOSTS: want {\"<pipeline>\":[\"<host>\",…]}")
		}
	}
	return t, nil
}

// refusals are the reasons the function does not run a pipeline's test:
// 403 when the document asks for what the stack does not give the
// pipeline, 400 when it would send a secret without TLS. Each names the
// field, never a value (a value may have come from a secret).
func (t targets) refusals(name string, cfg *config.Config) (int, []string) {
	var forbidden, bad []string
	d := &cfg.Destination
	if d.AWSRoleARN != "" {
		switch bound, ok := t.writers[name]; {
		case !ok:
			forbidden = append(forbidden, "destination.aws_role_arn: this stack gives pipeline "+name+
				" no writer role (context customerRoles), and the connection test signs in with no role a document names")
		case d.AWSRoleARN != bound:
			forbidden = append(forbidden, "destination.aws_role_arn: not the writer role this stack gives pipeline "+name+
				" ("+bound+"); the connection test signs in with no other")
		}
	}
	reg := &cfg.Format.SchemaRegistry
	avro := cfg.Format.AvroKey() || cfg.Format.AvroValue()
	if avro && reg.Type == config.RegistryGlue && reg.RoleARN != "" {
		// Glue's calls are signed with the assumed role, as Kafka's are.
		switch bound, ok := t.writers[name]; {
		case !ok:
			forbidden = append(forbidden, "format.schema_registry.role_arn: this stack gives pipeline "+name+
				" no writer role (context customerRoles), and the connection test signs in with no role a document names")
		case reg.RoleARN != bound:
			forbidden = append(forbidden, "format.schema_registry.role_arn: not the writer role this stack gives pipeline "+name+
				" ("+bound+"); the connection test signs in with no other")
		}
	}
	// A Confluent-compatible registry is a host the document names; Glue's
	// is AWS's endpoint of the region.
	var registryURL *url.URL
	if avro && reg.Type != config.RegistryGlue {
		registryURL, _ = url.Parse(reg.URL)
	}
	if allowed, ok := t.hosts[name]; ok && registryURL != nil && !hostAllowed(registryURL.Hostname(), allowed) {
		forbidden = append(forbidden, "format.schema_registry.url: the registry host is not among the hosts this stack allows pipeline "+name+" (context connectionTestHosts)")
	}
	if registryURL != nil && registryURL.Scheme != "https" && (reg.Username != "" || reg.Password != "") && !t.loopbackExempt(registryURL.Hostname()) {
		bad = append(bad, "format.schema_registry.url: the connection test sends the registry's username and password only over TLS; use the registry's https:// URL")
	}
	if allowed, ok := t.hosts[name]; ok {
		for i, hp := range strings.Split(d.BootstrapServers, ",") {
			host, _, err := net.SplitHostPort(strings.TrimSpace(hp))
			if err != nil || !hostAllowed(host, allowed) {
				forbidden = append(forbidden, fmt.Sprintf("destination.bootstrap_servers: broker %d is not among the hosts this stack allows pipeline %s (context connectionTestHosts)", i+1, name))
			}
		}
		hosts, err := sourceHosts(&cfg.Source)
		if err != nil {
			forbidden = append(forbidden, "source.url: its host cannot be read, so it cannot be checked against the hosts this stack allows pipeline "+name)
		}
		for _, h := range hosts {
			if !hostAllowed(h, allowed) {
				forbidden = append(forbidden, "source.url: the database host is not among the hosts this stack allows pipeline "+name+" (context connectionTestHosts)")
				break
			}
		}
	}
	switch d.Authentication {
	case config.AuthPlain, config.AuthSCRAMSHA256, config.AuthSCRAMSHA512:
		if d.DisableTLS {
			bad = append(bad, "destination.disable_tls: the connection test sends a SASL password only over TLS; "+
				"remove disable_tls and use the brokers' TLS listener (MSK: 9096 for SCRAM)")
		}
	}
	if msg := t.sourcePlaintext(&cfg.Source); msg != "" {
		bad = append(bad, msg)
	}
	if len(forbidden) > 0 {
		return http.StatusForbidden, append(forbidden, bad...)
	}
	if len(bad) > 0 {
		return http.StatusBadRequest, bad
	}
	return 0, nil
}

// sourcePlaintext says why the source's password could leave without TLS,
// or "": a URL that sends a password and lets it go in clear text (its
// source type's Endpoint says when: a PostgreSQL sslmode of prefer, the
// default, allow or disable; a MySQL URL without tls=true), with no
// certificate field set.
func (t targets) sourcePlaintext(s *config.Source) string {
	tls, err := config.SourceTLSSettings(s)
	if err != nil || tls.Enabled {
		return "" // a certificate field or verify-full/verify-ca: TLS required
	}
	kind, ok := capture.KindOf(s.Type)
	if !ok || kind.Endpoint == nil {
		return ""
	}
	e, err := kind.Endpoint(s)
	if err != nil || !e.Password || !e.Plaintext || len(e.Hosts) == 0 || t.loopbackExempt(e.Hosts[0]) {
		return "" // an unusable URL: the source cannot be set up, nothing is dialled
	}
	return "source.url: the connection test sends the database password only over TLS" + e.RequireTLS
}

func (t targets) loopbackExempt(host string) bool {
	if !t.plaintextLoopback {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return host == "localhost" || (err == nil && ip.IsLoopback())
}

// sourceHosts are the hosts the source's URL connects to.
func sourceHosts(s *config.Source) ([]string, error) {
	kind, ok := capture.KindOf(s.Type)
	if !ok || kind.Endpoint == nil {
		return nil, fmt.Errorf("source type %s", s.Type)
	}
	e, err := kind.Endpoint(s)
	if err != nil {
		return nil, err
	}
	return e.Hosts, nil
}

// hostAllowed reports whether host matches one of patterns: the same
// name (case-insensitive), *.domain for names under domain, the same IP
// address, or an IP address within a CIDR range. A name never matches a
// range: what it resolves to is not the document's to choose, the name is.
func hostAllowed(host string, patterns []string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	ip, ipErr := netip.ParseAddr(host)
	for _, p := range patterns {
		p = strings.ToLower(p)
		switch {
		case strings.Contains(p, "/"):
			if pre, err := netip.ParsePrefix(p); err == nil && ipErr == nil && pre.Contains(ip.Unmap()) {
				return true
			}
		case strings.HasPrefix(p, "*."):
			if ipErr != nil && strings.HasSuffix(host, p[1:]) && len(host) > len(p)-1 {
				return true
			}
		default:
			if a, err := netip.ParseAddr(p); err == nil {
				if ipErr == nil && a.Unmap() == ip.Unmap() {
					return true
				}
			} else if host == p {
				return true
			}
		}
	}
	return false
}
