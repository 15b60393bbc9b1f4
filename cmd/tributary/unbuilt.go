package main

import (
	"fmt"
	"slices"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// refuseUnbuilt refuses a source.type that passed the configuration rules
// but has no source registered in this binary, before any command runs:
// validate then refuses exactly what run would.
func refuseUnbuilt(cfg *config.Config) error {
	if slices.Contains(source.Types(), cfg.Source.Type) {
		return nil
	}
	return &config.Errors{Problems: []config.Problem{{
		Field:   "source.type",
		Message: fmt.Sprintf("%s is not built in this binary (built: %v)", cfg.Source.Type, source.Types()),
	}}}
}
