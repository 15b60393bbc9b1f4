package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestScrub: a resolved value leaves the report whole, entry by entry and
// host by host; a short one replaces only a field equal to it, so
// ordinary words survive.
func TestScrub(t *testing.T) {
	r := kafka.Report{
		Brokers: []kafka.BrokerResult{
			{ID: 1, Host: "b-1.secret-cluster.example", Port: 9098, Error: "broker 1 at b-1.secret-cluster.example:9098 is unreachable"},
			{ID: 2, Host: "ab", Port: 9098},
		},
		Checks: []kafka.Check{{Name: "sign-in", Detail: "no bootstrap server accepted the sign-in: b-1.secret-cluster.example:9098,b-2.secret-cluster.example:9098: eof"}},
	}
	scrub(&r, []string{"b-1.secret-cluster.example:9098,b-2.secret-cluster.example:9098", "ab"})
	body, _ := json.Marshal(r)
	if strings.Contains(string(body), "secret-cluster") {
		t.Errorf("a resolved value is still in the report: %s", body)
	}
	if r.Brokers[1].Host != "REDACTED" || !strings.Contains(r.Checks[0].Detail, "accepted the sign-in") {
		t.Errorf("short value: host %q, detail %q", r.Brokers[1].Host, r.Checks[0].Detail)
	}
}
