package main

// The refusals `validate` shares with `run`: what run would refuse at
// configuration time, validate refuses in the same words.

import (
	"context"
	"fmt"
	"slices"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// refuseUnbuilt refuses a source.type that passed the configuration rules
// but has no source registered in this binary, before any command runs:
// validate then refuses exactly what run would.
func refuseUnbuilt(cfg *config.Config) error {
	if slices.Contains(capture.Types(), cfg.Source.Type) {
		return nil
	}
	return &config.Errors{Problems: []config.Problem{{
		Field:   "source.type",
		Message: fmt.Sprintf("%s is not built in this binary (built: %v)", cfg.Source.Type, capture.Types()),
	}}}
}

// refuseUnusable builds, without connecting, what run builds from the
// configuration before it connects (the source, the Kafka client options)
// and returns the first refusal in run's own words, so that validate
// refuses what run would refuse at configuration time.
func refuseUnusable(ctx context.Context, cfg *config.Config) error {
	src, err := capture.New(ctx, source.Options{Pipeline: cfg.Name, TopicPrefix: cfg.LogicalName(), Config: cfg.Source})
	if err != nil {
		return err
	}
	src.Close()
	if _, err := kafka.ClientOpts(destination.Kafka(cfg.Destination)); err != nil {
		return err
	}
	return nil
}
