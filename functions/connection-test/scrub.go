package main

import (
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// scrub takes out of r (Kafka's report and the source's checks) every value that a reference in the pipeline's
// document resolved to: the caller of the API may start a test, not read
// the pipeline's secrets back. A value used as a broker list (e.g.
// bootstrap_servers: ${ssm:/tributary/shop/brokers}) is taken out entry by
// entry and host by host too, since the report shows brokers that way.
func scrub(r *response, resolved []string) {
	whole := scrubber(resolved)
	for i := range r.Brokers {
		b := &r.Brokers[i]
		b.Host, b.Error, b.Cause = whole(b.Host), whole(b.Error), whole(b.Cause)
	}
	for i := range r.Checks {
		r.Checks[i].Detail = whole(r.Checks[i].Detail)
	}
	for i := range r.Source {
		c := &r.Source[i]
		c.Detail, c.Fix = whole(c.Detail), whole(c.Fix)
	}
}

// scrubber returns a function that takes every value in resolved, and
// the parts of them described at scrub, out of a text.
func scrubber(resolved []string) func(string) string {
	needles := map[string]bool{}
	for _, v := range resolved {
		needles[v] = true
		// A whole source URL from one reference: its user and host are
		// parts of the resolved value, and the source's checks show them.
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			needles[u.Host], needles[u.Hostname()] = true, true
			if u.User != nil {
				needles[u.User.Username()] = true
				if pw, ok := u.User.Password(); ok {
					needles[pw] = true
				}
			}
		}
		for _, entry := range strings.Split(v, ",") {
			entry = strings.TrimSpace(entry)
			needles[entry] = true
			if host, _, err := net.SplitHostPort(entry); err == nil {
				needles[host] = true
			}
		}
	}
	delete(needles, "")
	// Longest first, so a value is replaced whole before its parts.
	var list []string
	for n := range needles {
		list = append(list, n)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })

	// Also in the forms messages quote them (%q, JSON); values shorter
	// than four bytes would wipe out ordinary words, but a text equal to
	// one is still replaced whole.
	text := config.NewScrubber(list...)
	return func(s string) string {
		if needles[s] {
			return config.RedactedValue
		}
		return text.String(s)
	}
}
