package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSNotifier queues row.skipped events to the SQS queue of
// webhooks.queue_url; the row-skipped function delivers them from there.
// An event is durable once SQS has accepted it, which is when Notify
// returns nil. The message body is the event's JSON (DecodeRowSkipped reads
// it back); it never holds the webhook URL or the signing secret.
type SQSNotifier struct {
	mu       sync.Mutex
	client   *sqs.Client
	queueURL string
}

// NewSQSNotifier returns a Notifier that sends to queueURL through client;
// a nil client is made from the SDK's standard environment (AWS_REGION,
// AWS_ENDPOINT_URL, the task role, …) on first use.
// A FIFO queue (".fifo") gets the pipeline as message group and the event
// ID as deduplication ID, so a retried Notify is not delivered twice.
func NewSQSNotifier(client *sqs.Client, queueURL string) *SQSNotifier {
	return &SQSNotifier{client: client, queueURL: queueURL}
}

// Notify sends ev and returns once SQS has stored it.
func (n *SQSNotifier) Notify(ctx context.Context, ev RowSkipped) error {
	if ev.Type == "" {
		ev.Type = EventType
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("row.skipped %s: encode: %w", ev.EventID, err)
	}
	if len(body) > MaxEventBytes {
		return fmt.Errorf("row.skipped %s: %d bytes encoded, over the %d-byte limit of a queued event", ev.EventID, len(body), MaxEventBytes)
	}
	in := &sqs.SendMessageInput{
		QueueUrl:    aws.String(n.queueURL),
		MessageBody: aws.String(string(body)),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			"type":     {DataType: aws.String("String"), StringValue: aws.String(ev.Type)},
			"pipeline": {DataType: aws.String("String"), StringValue: aws.String(ev.Pipeline)},
		},
	}
	if strings.HasSuffix(n.queueURL, ".fifo") {
		in.MessageGroupId = aws.String(ev.Pipeline)
		in.MessageDeduplicationId = aws.String(ev.EventID)
	}
	client, err := n.sqs(ctx)
	if err != nil {
		return fmt.Errorf("row.skipped %s: %w", ev.EventID, err)
	}
	if _, err := client.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("row.skipped %s: queue to SQS: %w", ev.EventID, err)
	}
	return nil
}

func (n *SQSNotifier) sqs(ctx context.Context) (*sqs.Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client == nil {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration: %w", err)
		}
		n.client = sqs.NewFromConfig(cfg)
	}
	return n.client, nil
}
