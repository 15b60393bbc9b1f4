package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// leaseDurationEnv overrides the DynamoDB lease duration (a Go duration,
// e.g. 3s). It is for tests and tuning, not part of the pipeline config:
// shorter leases mean a faster takeover after a crash and more writes.
const leaseDurationEnv = "TRIBUTARY_LEASE_DURATION"

// openStore opens the configured checkpoint store, taking ownership of the
// pipeline: the file lock, or the DynamoDB lease (waiting while another
// task holds it).
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (checkpoint.Store, error) {
	switch cfg.Checkpoint.Store {
	case "", config.StoreFile:
		return checkpoint.OpenFile(cfg.Checkpoint.Path, cfg.Name)
	case config.StoreDynamoDB:
		client, err := dynamoClient(ctx)
		if err != nil {
			return nil, err
		}
		lease := checkpoint.DefaultLeaseDuration
		if v := os.Getenv(leaseDurationEnv); v != "" {
			if lease, err = time.ParseDuration(v); err != nil || lease <= 0 {
				return nil, &usageError{fmt.Sprintf("%s: %q is not a positive duration", leaseDurationEnv, v)}
			}
		}
		return checkpoint.OpenDynamoDB(ctx, client, checkpoint.DynamoDBOptions{
			Table:         cfg.Checkpoint.Table,
			Pipeline:      cfg.Name,
			LeaseDuration: lease,
			CreateTable:   cfg.Checkpoint.CreateTable,
			Log:           log,
		})
	}
	return nil, &usageError{fmt.Sprintf("checkpoint.store: %q is not supported (use file or dynamodb)", cfg.Checkpoint.Store)}
}

// dynamoClient uses the SDK's standard environment (AWS_REGION,
// AWS_ENDPOINT_URL, credentials chain).
func dynamoClient(ctx context.Context) (*dynamodb.Client, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: AWS configuration: %w", err)
	}
	return dynamodb.NewFromConfig(awsCfg), nil
}

// checkpointIntervalEnv overrides the checkpoint cadence (a Go duration;
// default 1 s). For tests that need checkpoints to land at a finer grain,
// and for tuning; not part of the pipeline config.
const checkpointIntervalEnv = "TRIBUTARY_CHECKPOINT_INTERVAL"

func checkpointInterval() time.Duration {
	d, err := time.ParseDuration(os.Getenv(checkpointIntervalEnv))
	if err != nil || d <= 0 {
		return 0 // the pipeline's default
	}
	return d
}
