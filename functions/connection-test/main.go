// Command connection-test is the Lambda function behind the HTTP API route
// POST /pipelines/{name}/connection-test (IAM authorization). It loads the
// pipeline's document from SSM and runs the same check as `tributary
// test-connection`, dialling only through a dialer that refuses link-local
// and instance-metadata addresses.
//
// Environment: PIPELINE_PARAMETER_PREFIX (default /tributary/pipelines/),
// PIPELINE_SECRET_ROOT, and from the stack PIPELINE_WRITER_ROLES and
// PIPELINE_ALLOWED_HOSTS (targets.go).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	// No caching: a user who just fixed the configuration tests the new one.
	configs, err := pipelines.FromEnvironment(context.Background(), 0)
	if err != nil {
		log.Error("AWS configuration", "err", err)
		os.Exit(1)
	}
	h := NewHandler(configs, log)
	if h.targets, err = targetsFromEnvironment(); err != nil {
		log.Error("stack environment", "err", err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
