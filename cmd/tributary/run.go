package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// openStore opens the configured checkpoint store, taking ownership of the
// pipeline.
func openStore(cfg *config.Config) (checkpoint.Store, error) {
	switch cfg.Checkpoint.Store {
	case "", "file":
		return checkpoint.OpenFile(cfg.Checkpoint.Path, cfg.Name)
	}
	return nil, &usageError{fmt.Sprintf("checkpoint.store: %q is not available in this build yet (use file)", cfg.Checkpoint.Store)}
}

func runPipeline(ctx context.Context, cfg *config.Config, log *slog.Logger, _ io.Writer) error {
	store, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer store.Close()
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
	p := &pipeline.Pipeline{
		Name:            cfg.Name,
		Source:          src,
		Encoder:         debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.Destination.TopicPrefix}),
		Producer:        prod,
		Store:           store,
		Log:             log,
		DeleteMode:      cfg.Destination.DeleteMode,
		MaxMessageBytes: cfg.Destination.MaxMessageBytes,
	}
	log.Info("starting", "source", cfg.Source.Type, "bootstrap_servers", cfg.Destination.BootstrapServers, "topic_prefix", cfg.Destination.TopicPrefix)
	return p.Run(ctx)
}

func status(ctx context.Context, cfg *config.Config, _ *slog.Logger, stdout io.Writer) error {
	store, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	cp, found, err := store.Load(ctx)
	if err != nil {
		return err
	}
	if !found {
		fmt.Fprintf(stdout, "pipeline %s: no checkpoint yet\n", cfg.Name)
		return nil
	}
	fmt.Fprintf(stdout, "pipeline %s: checkpoint %s (saved %s)\n", cfg.Name, cp.Position, cp.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"))
	return nil
}
