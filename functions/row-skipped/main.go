// Command row-skipped is the Lambda function that delivers row.skipped
// events: it reads them from the SQS queue that pipelines write to
// (webhooks.queue_url), POSTs each to its pipeline's webhook URL signed in
// the Standard Webhooks style, and reports the ones that failed so only
// those are retried (and, after the queue's receive limit, moved to the DLQ).
//
// Environment: PIPELINE_PARAMETER_PREFIX (default /tributary/pipelines/)
// names where pipeline documents live in SSM: <prefix><pipeline>.
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
	configs, err := pipelines.FromEnvironment(context.Background(), time.Minute)
	if err != nil {
		log.Error("AWS configuration", "err", err)
		os.Exit(1)
	}
	h := NewHandler(configs, log)
	lambda.Start(h.Handle)
}
