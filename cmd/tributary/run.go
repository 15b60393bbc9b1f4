package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// softMemoryLimit keeps a task's footprint close to what the bounded
// in-flight buffer needs: without it the collector lets the heap grow to
// twice the live data between cycles. GOMEMLIMIT overrides it.
const softMemoryLimit = 80 << 20

func runPipeline(ctx context.Context, cfg *config.Config, log *slog.Logger, stdout io.Writer) error {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(softMemoryLimit)
	}
	// Metrics first, so that a failure to start counts as an error too.
	m, stopMetrics, err := startMetrics(cfg.Name, log, stdout)
	if err != nil {
		return err
	}
	return stopMetrics(publish(ctx, cfg, log, m))
}

// publish runs the pipeline until ctx is done or it fails.
func publish(ctx context.Context, cfg *config.Config, log *slog.Logger, m *metrics.Pipeline) error {
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer store.Close() // last: releases the lease after everything stopped
	src, err := source.New(ctx, source.Options{Pipeline: cfg.Name, TopicPrefix: cfg.Destination.TopicPrefix, Config: cfg.Source})
	if err != nil {
		return &usageError{err.Error()}
	}
	defer src.Close()
	prod, err := kafka.NewProducer(cfg.Destination)
	if err != nil {
		return &usageError{err.Error()}
	}
	defer prod.Close()
	if err := checkDestination(ctx, cfg, prod, log); err != nil {
		return err
	}
	p := &pipeline.Pipeline{
		Name:            cfg.Name,
		Source:          src,
		Encoder:         debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.Destination.TopicPrefix, IncludeUnknownTypes: cfg.Source.IncludeUnknownTypes}),
		Producer:        prod,
		Store:           store,
		Log:             log,
		DeleteMode:      cfg.Destination.DeleteMode,
		MaxMessageBytes: cfg.Destination.MaxMessageBytes,
		CheckpointEvery: checkpointInterval(),

		MessageCompression: cfg.Destination.MessageCompression,
		Notifier:           rowSkippedNotifier(cfg, log),
		Metrics:            m,
	}
	log.Info("starting", "source", cfg.Source.Type, "bootstrap_servers", cfg.Destination.BootstrapServers, "topic_prefix", cfg.Destination.TopicPrefix)
	return p.Run(ctx)
}

func status(ctx context.Context, cfg *config.Config, log *slog.Logger, stdout io.Writer) error {
	cp, found, err := readCheckpoint(ctx, cfg, log)
	if err != nil {
		return err
	}
	if !found {
		fmt.Fprintf(stdout, "pipeline %s: no checkpoint yet\n", cfg.Name)
		return nil
	}
	fmt.Fprintf(stdout, "pipeline %s: checkpoint %s (saved %s)\n", cfg.Name, cp.Position, cp.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"))
	if cp.Epoch > 0 {
		owner := cp.Owner
		if owner == "" {
			owner = "none (released)"
		}
		fmt.Fprintf(stdout, "lease: owner %s, epoch %d\n", owner, cp.Epoch)
	}
	return nil
}
