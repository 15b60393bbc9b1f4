package kafka

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestConnectionOldCluster: the connection test says in words that a
// Kafka 2.3 cluster cannot create topics with its defaults and that the
// principal lacks IdempotentWrite. kfake stands in for the broker: the
// shared test broker is Kafka 4 and cannot pretend to be 2.3, nor refuse
// a producer id as a pre-3.0 broker without the ACL does (that refusal
// is injected on InitProducerID).
func TestConnectionOldCluster(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(kversion.V2_3_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := req.(*kmsg.InitProducerIDRequest).ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil, true
	})
	d := Options{BootstrapServers: strings.Join(c.ListenAddrs(), ","), DisableTLS: true, CreateMissingTopics: true}
	r := TestConnection(context.Background(), d, "shop")
	checks := map[string]Check{}
	for _, ch := range r.Checks {
		checks[ch.Name] = ch
	}
	if v := checks[CheckVersion]; v.OK || !v.Required || !strings.Contains(v.Detail, "older than 2.4") || !strings.Contains(v.Detail, "create_missing_topics cannot work") {
		t.Errorf("version check %+v", v)
	}
	if i := checks[CheckIdempotent]; i.OK || !strings.Contains(i.Detail, "IdempotentWrite permission on the cluster, which Kafka before 3.0 requires") {
		t.Errorf("idempotent check %+v", i)
	}
	if r.OK {
		t.Error("the report is OK")
	}
}

// TestConnectionCurrentCluster: on a current cluster (kfake's latest
// versions) both checks pass.
func TestConnectionCurrentCluster(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := Options{BootstrapServers: strings.Join(c.ListenAddrs(), ","), DisableTLS: true}
	r := TestConnection(context.Background(), d, "shop")
	for _, ch := range r.Checks {
		if (ch.Name == CheckVersion || ch.Name == CheckIdempotent) && !ch.OK {
			t.Errorf("%s: %s", ch.Name, ch.Detail)
		}
	}
}
