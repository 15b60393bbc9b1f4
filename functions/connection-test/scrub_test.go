package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestScrub: a resolved value leaves the report whole, entry by entry and
// host by host; a short one replaces only a field equal to it, so
// ordinary words survive. A whole source URL takes its user, host and database
// out of the source's checks.
func TestScrub(t *testing.T) {
	r := response{Report: kafka.Report{
		Brokers: []kafka.BrokerResult{
			{ID: 1, Host: "b-1.secret-cluster.example", Port: 9098, Error: "broker 1 at b-1.secret-cluster.example:9098 is unreachable"},
			{ID: 2, Host: "ab", Port: 9098},
		},
		Checks: []kafka.Check{{Name: "sign-in", Detail: "no bootstrap server accepted the sign-in: b-1.secret-cluster.example:9098,b-2.secret-cluster.example:9098: eof"}},
	}, Source: []source.Check{{Name: "source connection", Detail: "cannot connect to PostgreSQL at db.secret-host.example:5432 as cdc_secret_user: timeout"}}}
	scrub(&r, []string{"b-1.secret-cluster.example:9098,b-2.secret-cluster.example:9098", "ab",
		"postgres://cdc_secret_user:pw@db.secret-host.example:5432/shop"})
	body, _ := json.Marshal(r)
	if strings.Contains(string(body), "secret-") {
		t.Errorf("a resolved value is still in the report: %s", body)
	}
	if r.Brokers[1].Host != "REDACTED" || !strings.Contains(r.Checks[0].Detail, "accepted the sign-in") {
		t.Errorf("short value: host %q, detail %q", r.Brokers[1].Host, r.Checks[0].Detail)
	}
}
