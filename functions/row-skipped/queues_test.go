package main

import (
	"maps"
	"strings"
	"testing"
)

// TestParseQueues: the binding infra/dataplane.go writes reads back; a
// value that would leave a queue's pipeline in doubt is refused at start.
func TestParseQueues(t *testing.T) {
	got, err := parseQueues(sampleQueues)
	want := map[string]string{
		"arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedshop0A1B2C3D-Xy7Pq2Lm9Rt4":    "shop",
		"arn:aws:sqs:us-east-1:123456789012:Tributary-RowSkippedbilling4E5F6A7B-Hk3Vn8Sd1Wz6": "billing",
	}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("parseQueues = %v, %v; want %v", got, err, want)
	}
	const arn = "arn:aws:sqs:us-east-1:123456789012:q"
	for in, msg := range map[string]string{
		"":                                "is empty",
		"shop":                            "is not <pipeline>=<queue ARN>",
		"Shop=" + arn:                     "is not <pipeline>=<queue ARN>",
		"shop=https://sqs.example/q":      "is not an SQS queue ARN",
		"shop=" + arn + ",billing=" + arn: "is bound to both shop and billing",
		"shop=" + arn + ",":               "is not <pipeline>=<queue ARN>",
	} {
		if _, err := parseQueues(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("parseQueues(%q) = %v, want an error with %q", in, err, msg)
		}
	}
}
