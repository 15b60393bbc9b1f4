package kafka_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// TestKafkaAuthConnectionTest signs in with every SASL mechanism, with
// mutual TLS, and fails clearly with a wrong password or an untrusted
// broker certificate, through the connection test on the real broker.
func TestKafkaAuthConnectionTest(t *testing.T) {
	itest.SkipShort(t)
	ctx := context.Background()
	prefix := itest.SecPrefix("auth")

	for _, mech := range []string{config.AuthPlain, config.AuthSCRAMSHA256, config.AuthSCRAMSHA512} {
		t.Run(mech, func(t *testing.T) {
			r := kafka.TestConnection(ctx, itest.SASLDest(t, mech, "writer", itest.SASLUsers["writer"]), prefix)
			if !r.OK {
				t.Fatalf("report not OK: %s", dump(r))
			}
			if c := check(r, kafka.CheckCreate); c.OK || c.Required {
				t.Errorf("writer may not create, and create is not required without create_missing_topics: %+v", c)
			}
			if len(r.Brokers) != 1 || !r.Brokers[0].Reachable || r.Brokers[0].Port != 9094 {
				t.Errorf("brokers %+v", r.Brokers)
			}
		})
	}

	t.Run("creator may create", func(t *testing.T) {
		d := itest.SASLDest(t, config.AuthSCRAMSHA512, "creator", itest.SASLUsers["creator"])
		d.CreateMissingTopics = true
		r := kafka.TestConnection(ctx, d, prefix)
		if !r.OK || !check(r, kafka.CheckCreate).OK {
			t.Fatalf("report: %s", dump(r))
		}
	})

	t.Run("outside the ACL prefix", func(t *testing.T) {
		r := kafka.TestConnection(ctx, itest.SASLDest(t, config.AuthSCRAMSHA512, "writer", itest.SASLUsers["writer"]), "elsewhere")
		if r.OK {
			t.Fatalf("report OK outside the prefix: %s", dump(r))
		}
		for _, name := range []string{kafka.CheckDescribe, kafka.CheckWrite} {
			if c := check(r, name); c.OK {
				t.Errorf("%s allowed outside the ACL prefix: %+v", name, c)
			}
		}
		if c := check(r, kafka.CheckDescribe); !strings.Contains(c.Detail, "TOPIC_AUTHORIZATION_FAILED") {
			t.Errorf("describe detail %q does not carry the broker's authorization error", c.Detail)
		}
	})

	for _, mech := range []string{config.AuthPlain, config.AuthSCRAMSHA256, config.AuthSCRAMSHA512} {
		t.Run("wrong password "+mech, func(t *testing.T) {
			const canary = "canary-Pa55w0rd-7f3e"
			r := kafka.TestConnection(ctx, itest.SASLDest(t, mech, "writer", canary), prefix, kafka.WithTimeout(20*time.Second))
			out := dump(r)
			if r.OK {
				t.Fatalf("signed in with a wrong password: %s", out)
			}
			c := check(r, kafka.CheckSignIn)
			if c.OK || !strings.Contains(c.Detail, "SASL_AUTHENTICATION_FAILED") {
				t.Errorf("sign-in check %+v, want a SASL authentication failure", c)
			}
			if strings.Contains(out, canary) {
				t.Errorf("the password appears in the report: %s", out)
			}
		})
	}

	t.Run("mutual TLS", func(t *testing.T) {
		d := itest.MTLSDest(t)
		d.CreateMissingTopics = true
		r := kafka.TestConnection(ctx, d, prefix)
		if !r.OK {
			t.Fatalf("report: %s", dump(r))
		}
	})

	t.Run("mutual TLS without a client certificate", func(t *testing.T) {
		d := itest.MTLSDest(t)
		d.ClientCertificate, d.ClientKey = "", ""
		r := kafka.TestConnection(ctx, d, prefix, kafka.WithTimeout(20*time.Second))
		if r.OK || check(r, kafka.CheckSignIn).OK {
			t.Fatalf("report: %s", dump(r))
		}
	})

	t.Run("untrusted broker certificate", func(t *testing.T) {
		d := itest.SASLDest(t, config.AuthSCRAMSHA512, "writer", itest.SASLUsers["writer"])
		d.CACertificate = itest.OtherCA(t)
		r := kafka.TestConnection(ctx, d, prefix, kafka.WithTimeout(20*time.Second))
		c := check(r, kafka.CheckSignIn)
		if r.OK || c.OK || !strings.Contains(c.Detail, "not signed by a trusted CA") {
			t.Fatalf("sign-in %+v, want an untrusted-certificate refusal; report %s", c, dump(r))
		}
		// Without ca_certificate the system roots apply, which do not
		// hold the test CA either.
		d.CACertificate = ""
		if r := kafka.TestConnection(ctx, d, prefix, kafka.WithTimeout(20*time.Second)); r.OK {
			t.Fatalf("verified against the system roots: %s", dump(r))
		}
	})
}

func check(r kafka.Report, name string) kafka.Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return kafka.Check{Name: name, Detail: "missing"}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
