// Command row-skipped is the Lambda function that delivers row.skipped
// events: it reads them from the SQS queue that pipelines write to
// (webhooks.queue_url), POSTs each to its pipeline's webhook URL signed in
// the Standard Webhooks style, and reports the ones that failed so only
// those are retried (and, after the queue's receive limit, moved to the DLQ).
//
// Environment: ROW_SKIPPED_QUEUES binds each queue to its pipeline
// (<pipeline>=<queue ARN>,…; see queues.go): an event is signed for the
// pipeline of the queue it came from, and only when it names it.
// PRIVATE_WEBHOOK_PIPELINES (<pipeline>,…) lists the pipelines whose
// receivers may be inside the network (queues.go).
// PIPELINE_PARAMETER_PREFIX (default /tributary/pipelines/) names where
// pipeline documents live in SSM: <prefix><pipeline>.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	queues, err := parseQueues(os.Getenv(QueuesVariable))
	if err != nil {
		log.Error("configuration", "err", err)
		os.Exit(1)
	}
	configs, err := pipelines.FromEnvironment(context.Background(), time.Minute)
	if err != nil {
		log.Error("AWS configuration", "err", err)
		os.Exit(1)
	}
	h := NewHandler(configs, queues, parsePrivate(os.Getenv(PrivateWebhooksVariable)), log)
	lambda.Start(h.Handle)
}
