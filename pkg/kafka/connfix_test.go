package kafka

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestConnFixWording: the fixes for broker error codes the test broker
// cannot produce on demand (a mechanism its listener lacks) and the ACL
// fix for MSK IAM, which names IAM actions rather than kafka-acls.sh.
func TestConnFixWording(t *testing.T) {
	d := Options{Authentication: AuthSCRAMSHA512, Username: "writer", BootstrapServers: "b-1:9096"}
	if got := connFix(d, fmt.Errorf("sasl: %w", kerr.UnsupportedSaslMechanism)); !strings.Contains(got, "does not enable SCRAM-SHA-512") || !strings.Contains(got, "destination.authentication") {
		t.Errorf("unsupported mechanism: %q", got)
	}
	if got := aclFix(d, "shop", "Describe", "Write"); !strings.Contains(got, "kafka-acls.sh --bootstrap-server b-1:9096") || !strings.Contains(got, "User:writer --operation Describe --operation Write --topic shop.") {
		t.Errorf("kafka-acls line: %q", got)
	}
	iam := Options{Authentication: AuthAWSMSKIAM, AWSRoleARN: "arn:aws:iam::1:role/w"}
	if got := aclFix(iam, "shop", "Describe", "Write", "Create"); !strings.Contains(got, "kafka-cluster:DescribeTopic, kafka-cluster:WriteData, kafka-cluster:CreateTopic") || !strings.Contains(got, "/shop.*") {
		t.Errorf("MSK IAM: %q", got)
	}
}
