package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestSQSNotifier queues events to the AWS emulator's SQS and reads them
// back as the row-skipped function would.
func TestSQSNotifier(t *testing.T) {
	client := sqs.NewFromConfig(awstest.Env(t))
	ctx := context.Background()
	for _, fifo := range []bool{false, true} {
		name := awstest.Name("row-skipped-")
		attrs := map[string]string{}
		if fifo {
			name += ".fifo"
			attrs[string(sqstypes.QueueAttributeNameFifoQueue)] = "true"
		}
		q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })

		n := NewSQSNotifier(client, *q.QueueUrl)
		ev := RowSkipped{EventID: "ev-42", Pipeline: "shop", Topic: "shop.public.orders", Table: "public.orders",
			PrimaryKey: map[string]any{"id": 42}, SizeBytes: 2 << 20, LimitBytes: 1 << 20, Reason: "too large",
			Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		if err := n.Notify(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if fifo { // a retried Notify of the same event is deduplicated
			if err := n.Notify(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10,
			MessageAttributeNames: []string{"All"}, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) != 1 {
			t.Fatalf("fifo=%v: %d messages, want 1", fifo, len(out.Messages))
		}
		m := out.Messages[0]
		got, err := DecodeRowSkipped([]byte(*m.Body))
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != EventType || got.EventID != "ev-42" || got.Pipeline != "shop" || !got.Time.Equal(ev.Time) {
			t.Fatalf("got %+v", got)
		}
		if a := m.MessageAttributes["pipeline"]; a.StringValue == nil || *a.StringValue != "shop" {
			t.Fatalf("attributes %+v", m.MessageAttributes)
		}
	}

	// A queue that does not exist: Notify fails (the pipeline must not move on).
	n := NewSQSNotifier(client, awstest.Endpoint+"/123456789012/does-not-exist")
	err := n.Notify(ctx, RowSkipped{EventID: "ev-1", Pipeline: "shop"})
	if err == nil || !strings.Contains(err.Error(), "row.skipped ev-1: queue to SQS") {
		t.Fatalf("missing queue: %v", err)
	}
}
