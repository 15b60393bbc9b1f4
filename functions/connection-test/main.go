// Command connection-test is the Lambda function behind the HTTP API route
// POST /pipelines/{name}/connection-test (IAM authorization). It loads the
// pipeline's document from SSM and runs the same check as `tributary
// test-connection`, dialling only through a dialer that refuses link-local
// and instance-metadata addresses.
//
// Environment: PIPELINE_PARAMETER_PREFIX (default /tributary/pipelines/).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	awsCfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("AWS configuration", "err", err)
		os.Exit(1)
	}
	// No caching: a user who just fixed the configuration tests the new one.
	h := NewHandler(pipelines.New(ssm.NewFromConfig(awsCfg), os.Getenv("PIPELINE_PARAMETER_PREFIX"), 0), log)
	lambda.Start(h.Handle)
}
