// Command tributary publishes database changes to Kafka as Debezium JSON.
//
//	tributary run --config <file>        backfill then stream until SIGTERM
//	tributary validate --config <file>   exit 0, or 2 with every problem listed
//	tributary status --config <file>     show the checkpoint
//
// Exit codes: 0 ok, 1 runtime failure, 2 bad configuration or usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/tributary-cdc/tributary/pkg/config"

	_ "github.com/tributary-cdc/tributary/pkg/source/mysql"    // registers source.type mysql
	_ "github.com/tributary-cdc/tributary/pkg/source/postgres" // registers source.type postgres
)

const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, cfg *config.Config, log *slog.Logger, stdout io.Writer) error
}

var commands = map[string]command{
	"run":             {"backfill, then stream changes until SIGTERM", runPipeline},
	"validate":        {"check the configuration; exit 2 listing every problem", validate},
	"status":          {"show the pipeline's checkpoint", status},
	"test-connection": {"sign in to Kafka, reach every broker, check topic permissions (--json)", testConnection},
}

func main() {
	os.Exit(mainExit(os.Args[1:], os.Stdout, os.Stderr))
}

func mainExit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || commands[args[0]].run == nil {
		usage(stderr)
		return exitUsage
	}
	cmd := commands[args[0]]
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	ref := fs.String("config", "", "pipeline configuration: a YAML or JSON file, or ssm:/parameter/name")
	if args[0] == "test-connection" {
		fs.BoolVar(&jsonOutput, "json", false, "print the report as JSON")
	}
	if args[0] == "run" {
		fs.StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://<addr>/metrics (e.g. 127.0.0.1:9464)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if *ref == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: tributary", args[0], "--config <file>")
		return exitUsage
	}
	log := newLogger(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	cfg, err := config.Load(ctx, *ref)
	if err != nil {
		fmt.Fprintf(stderr, "invalid configuration %s:\n%v\n", *ref, err)
		return exitUsage
	}
	if err := cmd.run(ctx, cfg, log.With("pipeline", cfg.Name), stdout); err != nil {
		var usageErr *usageError
		if errors.As(err, &usageErr) {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		log.Error("failed", "pipeline", cfg.Name, "err", err)
		return exitRuntime
	}
	return exitOK
}

// usageError is a configuration problem found after loading (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tributary <command> --config <file>\n\ncommands:")
	for _, name := range []string{"run", "validate", "status"} {
		fmt.Fprintf(w, "  %-9s %s\n", name, commands[name].summary)
	}
}

// newLogger logs text to a terminal and JSON otherwise (ECS, files).
func newLogger(w io.Writer) *slog.Logger {
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return slog.New(slog.NewTextHandler(w, nil))
		}
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

func validate(_ context.Context, cfg *config.Config, _ *slog.Logger, stdout io.Writer) error {
	fmt.Fprintf(stdout, "configuration for pipeline %s is valid\n", cfg.Name)
	return nil
}
