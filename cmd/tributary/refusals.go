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
	src, err := capture.New(ctx, source.OptionsFor(cfg))
	if err != nil {
		return err
	}
	src.Close()
	if _, err := kafka.ClientOpts(destination.Kafka(cfg.Destination)); err != nil {
		return err
	}
	return nil
}

// refuseUnusableFor is refuseUnusable for command: status and backfill
// build neither the source nor the Kafka client (they read the checkpoint
// store), so what those would refuse is not theirs to refuse; validate
// builds them with each unset variable (accepted by usesNoSecrets) read as
// a placeholder, since "" would be judged as the value run will have (a
// mask's salt "" is refused).
func refuseUnusableFor(ctx context.Context, command, ref string, cfg *config.Config, unset bool) error {
	switch {
	case command == "status" || command == "backfill":
		return nil
	case !unset:
		return refuseUnusable(ctx, cfg)
	}
	built, err := config.Load(ctx, ref, config.WithUnsetEnvironment(func(string, string) {}), config.WithUnsetPlaceholder("unset"))
	if err != nil {
		return err
	}
	return refuseUnusable(ctx, built)
}
