// Command backfill is the Lambda function behind the HTTP API route
// POST /pipelines/{name}/backfill (IAM authorization). It writes a
// backfill request into the pipeline's item of the checkpoint table, as
// `tributary backfill` does; the pipeline's task takes it within a few
// seconds and re-publishes the tables with op r while it keeps streaming.
// Its role may only dynamodb:UpdateItem the deployed pipelines' items: it
// reads no pipeline document and no secret.
//
// Environment: CHECKPOINT_TABLE (required).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	table := os.Getenv("CHECKPOINT_TABLE")
	if table == "" {
		log.Error("CHECKPOINT_TABLE is not set")
		os.Exit(1)
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("AWS configuration", "err", err)
		os.Exit(1)
	}
	h := NewHandler(dynamodb.NewFromConfig(cfg), table, log)
	lambda.Start(h.Handle)
}
