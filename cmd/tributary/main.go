// Command tributary publishes database changes to Kafka as Debezium JSON.
//
//	tributary run --config <file>              backfill then stream until SIGTERM
//	tributary validate --config <file>         exit 0 (warnings on stderr), or 2 with every problem listed
//	tributary status --config <file> [--json]  the pipeline's state, read without taking it over
//	tributary backfill --config <file> --table <t>[,…] | --all   re-publish tables (op r) without stopping the pipeline
//	tributary test-connection --config <file>  check the source and Kafka (--json)
//	tributary drop --config <file> [--yes]     remove the slot, publication, signal rows, offsets record and checkpoint
//	tributary tables --config <file>           the tables run would capture, their topics, keys and columns (--json)
//	tributary version                          version, commit and Go version
//
// Exit codes: 0 ok (and --help), 1 runtime failure, 2 bad configuration or usage.
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
	"strings"
	"syscall"

	"github.com/tributary-cdc/tributary/pkg/config"
)

const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// invocation is one command's configuration, flags and outputs.
type invocation struct {
	cfg    *config.Config
	log    *slog.Logger
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	json     bool   // status, test-connection: --json
	httpAddr string // run: --http-addr (alias --metrics-addr)
	tables   string // backfill: --table
	all      bool   // backfill: --all
	yes      bool   // drop: --yes

	// unset lists the ${env:…} references to unset variables, which
	// the commands of usesNoSecrets load without.
	unset []string
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	json    bool // takes --json
	run     func(ctx context.Context, inv *invocation) error
}

// commands in the order usage lists them.
var commands = []command{
	{"run", "backfill, then stream changes until SIGTERM", false, runPipeline},
	{"validate", "check the configuration; exit 2 listing every problem, warnings on stderr", false, validate},
	{"status", "show state, owner, position, lag, progress and errors, without taking the pipeline over (--json)", true, showStatus},
	{"backfill", "re-publish tables with op r while the pipeline keeps streaming (--table <name>[,…] or --all)", false, requestBackfill},
	{"test-connection", "check the source and Kafka: reachability, sign-in, settings, grants, topic permissions (--json)", true, testConnection},
	{"drop", "remove the pipeline: its replication slot, publication, signal table rows, offsets record and checkpoint (asks first; --yes)", false, dropPipeline},
	{"tables", "list the tables run would capture: topic, key columns, replica identity, estimated rows, excluded and masked columns (--json)", true, listTables},
}

// usesNoSecrets are the commands that connect to no database or cluster
// (status's lag behind the source aside, which it then reports unknown):
// they run where the variables holding passwords are not set. Each maps
// to the fields it still reads (the pipeline's name, its checkpoint
// store, backfill's source.tables): a variable unset there is refused as
// every command refuses it, since "" would read another store.
var usesNoSecrets = map[string][]string{
	"validate": nil,
	"status":   {"name", "checkpoint."},
	"backfill": {"name", "checkpoint.", "source.tables"},
}

// unsetRead lists the unset references (inv.unset) in the fields a
// command reads.
func unsetRead(unset, reads []string) []string {
	var out []string
	for _, u := range unset {
		for _, field := range reads {
			if strings.HasPrefix(u, field) {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func main() {
	os.Exit(mainExit(os.Args[1:], os.Stdout, os.Stderr))
}

func mainExit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, currentBuild().String())
		return exitOK
	}
	cmd, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "tributary: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	inv := &invocation{stdin: os.Stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("tributary "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	ref := fs.String("config", "", "pipeline configuration: a YAML or JSON file, or ssm:/parameter/name")
	logLevel := fs.String("log-level", "", "debug | info | warn | error (overrides log_level; default info)")
	logFormat := fs.String("log-format", "", "text | json (overrides log_format; default text on a terminal, json otherwise)")
	if cmd.json {
		fs.BoolVar(&inv.json, "json", false, "print JSON instead of text")
	}
	if cmd.name == "run" {
		fs.StringVar(&inv.httpAddr, "http-addr", "", "serve /metrics, the status page and /status.json on this address (e.g. 127.0.0.1:8080)")
		fs.StringVar(&inv.httpAddr, "metrics-addr", "", "the same as --http-addr")
	}
	if cmd.name == "backfill" {
		fs.StringVar(&inv.tables, "table", "", "tables to re-publish, comma-separated, as source.tables writes them (schema.table)")
		fs.BoolVar(&inv.all, "all", false, "re-publish every captured table")
	}
	if cmd.name == "drop" {
		fs.BoolVar(&inv.yes, "yes", false, "drop without asking for confirmation (needed without a terminal)")
	}
	// Parse prints its error, then calls Usage; help is printed here
	// once: on stdout for --help, on stderr after an error.
	fs.Usage = func() {}
	printUsage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprintf(w, "usage: tributary %s --config <file> [flags]\n\n%s\n\nflags:\n", cmd.name, cmd.summary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return exitOK
		}
		printUsage(stderr)
		return exitUsage
	}
	if *ref == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "usage: tributary %s --config <file> (tributary %s --help lists the flags)\n", cmd.name, cmd.name)
		return exitUsage
	}
	if err := checkLogFlags(*logLevel, *logFormat); err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var loadOpts []config.LoadOption
	reads, tolerant := usesNoSecrets[cmd.name]
	if tolerant {
		loadOpts = append(loadOpts, config.WithUnsetEnvironment(func(field, problem string) {
			inv.unset = append(inv.unset, field+": "+problem)
		}))
	}
	cfg, err := config.Load(ctx, *ref, loadOpts...)
	if err != nil {
		fmt.Fprintln(stderr, err) // its first line names the file; its problems hold no secret
		return exitUsage
	}
	// From here on everything printed or logged passes a scrubber of the
	// configuration's secrets (the values its references read, passwords):
	// a driver's or broker's error could echo one.
	format := pickLogFormat(stderr, pick(*logFormat, cfg.LogFormat))
	scrub := cfg.Scrubber()
	stdout, stderr = scrub.Writer(stdout), scrub.Writer(stderr)
	inv.stdout, inv.stderr = stdout, stderr
	if read := unsetRead(inv.unset, reads); len(read) > 0 {
		fmt.Fprintf(stderr, "invalid configuration %s:\n  %s\n", *ref, strings.Join(read, "\n  "))
		return exitUsage
	}
	if err := refuseUnbuilt(cfg); err != nil {
		fmt.Fprintf(stderr, "invalid configuration %s:\n%v\n", *ref, err)
		return exitUsage
	}
	if err := refuseUnusableFor(ctx, cmd.name, *ref, cfg, len(inv.unset) > 0); err != nil {
		fmt.Fprintf(stderr, "invalid configuration %s:\n%v\n", *ref, err)
		return exitUsage
	}
	inv.cfg = cfg
	inv.log = newLogger(stderr, pick(*logLevel, cfg.LogLevel), format).With("pipeline", cfg.Name)
	if cmd.name == "tables" || cmd.name == "test-connection" {
		inv.log = logOnce(inv.log)
	}
	if err := cmd.run(ctx, inv); err != nil {
		var printed *reportedError
		if errors.As(err, &printed) {
			return printed.code
		}
		var usageErr *usageError
		if errors.As(err, &usageErr) {
			fmt.Fprintln(stderr, err)
			return exitUsage
		}
		inv.log.Error("failed", "err", err)
		return exitRuntime
	}
	return exitOK
}

// usageError is a configuration problem found after loading (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// reportedError is a failure the command's own output already shows (a
// failed check of test-connection, a problem `tables` lists): it sets
// the exit code and is not printed a second time.
type reportedError struct {
	code int
	msg  string
}

func (e *reportedError) Error() string { return e.msg }

func usage(w io.Writer) {
	fmt.Fprint(w, "Tributary publishes database changes to Kafka as Debezium JSON.\n\n",
		"usage: tributary <command> --config <file> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-16s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-16s %s\n", "version", "print the version, commit and Go version")
	fmt.Fprint(w, "\n`tributary <command> --help` lists a command's flags.\n",
		"Exit codes: 0 ok, 1 runtime failure, 2 bad configuration or usage.\n",
		"Configuration reference: docs/configuration.md\n")
}

func pick(flagValue, configValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return configValue
}

func validate(_ context.Context, inv *invocation) error {
	for _, w := range inv.cfg.Warnings() {
		fmt.Fprintf(inv.stderr, "warning: %s\n", w)
	}
	for _, u := range inv.unset {
		fmt.Fprintf(inv.stderr, "warning: %s: run, test-connection and drop need it\n", u)
	}
	fmt.Fprintf(inv.stdout, "configuration for pipeline %s is valid\n", inv.cfg.Name)
	return nil
}
