package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// rowSkippedNotifier is where row.skipped events go: the SQS queue of
// webhooks.queue_url when set (in AWS); locally a signed POST to webhooks.row_skipped_url, or else a JSON-lines file
// beside the checkpoints (<checkpoint.path>/<name>.row-skipped.jsonl) plus
// a log line.
func rowSkippedNotifier(cfg *config.Config, log *slog.Logger) webhook.Notifier {
	if cfg.Webhooks.QueueURL != "" { // in AWS: queued for the row-skipped function
		return webhook.NewSQSNotifier(nil, cfg.Webhooks.QueueURL)
	}
	if cfg.Webhooks.RowSkippedURL != "" {
		return webhook.NewHTTP(cfg.Webhooks.RowSkippedURL, cfg.Webhooks.SigningSecret, nil)
	}
	return webhook.NewFile(filepath.Join(cfg.Checkpoint.Path, cfg.Name+".row-skipped.jsonl"), log)
}

// checkDestination runs the connection test at start-up: a cluster that
// cannot be signed in to, or a broker that is unreachable, stops the task
// before it reads anything; missing permissions are logged (an ACL may
// allow the pipeline's topics without allowing the probe topic). Then it
// lists the topics of the configured tables that do not exist when they
// may not be created.
func checkDestination(ctx context.Context, cfg *config.Config, prod *kafka.Producer, hasCheckpoint bool, log *slog.Logger) error {
	d := cfg.Destination
	// Two listed tables that would share a topic are refused before
	// anything connects; tables found later are checked as they appear.
	claims := debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.LogicalName(), Topic: d.Topic, Routes: cfg.TopicRoutes()})
	named := namedTables(cfg.Source.Tables)
	for _, name := range named {
		if _, err := claims.ClaimTopic(tableID(cfg.Source.Type, name)); err != nil {
			return &startupError{"source.tables: " + err.Error()}
		}
	}
	r, err := reachDestination(ctx, cfg, hasCheckpoint, log)
	if err != nil {
		return err
	}
	for _, c := range r.Checks {
		if c.OK {
			continue
		}
		switch c.Name {
		case kafka.CheckConfiguration, kafka.CheckSignIn, kafka.CheckMetadata, kafka.CheckBrokers:
			return &startupError{c.Name + ": " + c.Detail}
		}
		if c.Required {
			log.Warn("connection test: "+c.Name+" failed", "detail", c.Detail)
		}
	}
	if d.CreateMissingTopics || len(named) == 0 || cfg.Transforms.Outbox.Enabled {
		// The outbox router's topics come from the rows.
		return nil
	}
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: cfg.LogicalName(), Topic: d.Topic, Routes: cfg.TopicRoutes()})
	var topics []string
	for _, name := range named {
		if t := enc.Topic(&change.Table{ID: tableID(cfg.Source.Type, name)}); !slices.Contains(topics, t) { // destination.topic: one for all
			topics = append(topics, t)
		}
	}
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	missing, err := prod.MissingTopics(mctx, topics)
	if err != nil {
		log.Warn("could not list missing topics", "err", err)
		return nil
	}
	if len(missing) > 0 {
		log.Error("topics do not exist and destination.create_missing_topics is false; the pipeline waits at each until it is created",
			"missing_topics", missing)
	}
	return nil
}

// namedTables are the tables source.tables names outright: its plain
// names, and its regular expressions that match one name only
// (`shop\.orders`, as that name). Another pattern names no topic until the
// tables it matches are found, and those are checked as they appear: taken
// as a name, `shop\.cart_.*` would be a topic of its own, and two patterns
// could seem to share one.
func namedTables(entries []string) []string {
	var out []string
	for _, e := range entries {
		if config.IsPlainTable(e) {
			out = append(out, e)
			continue
		}
		if re, err := regexp.Compile(e); err == nil {
			if name, whole := re.LiteralPrefix(); whole && name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// tableID reads an include-list entry as the source names the table:
// database.collection for MongoDB (a collection's name may hold dots:
// fs.files), else schema.table, db.table or db.schema.table.
func tableID(sourceType, name string) change.TableID {
	if sourceType == config.SourceMongoDB {
		db, coll, _ := strings.Cut(name, ".")
		return change.TableID{DB: db, Name: coll}
	}
	parts := strings.Split(name, ".")
	switch len(parts) {
	case 3:
		return change.TableID{DB: parts[0], Schema: parts[1], Name: parts[2]}
	case 2:
		return change.TableID{Schema: parts[0], Name: parts[1]}
	}
	return change.TableID{Name: name}
}

// startupError is a destination the task cannot use (exit 1).
type startupError struct{ msg string }

func (e *startupError) Error() string { return "destination: " + e.msg }

// reachDestination runs the connection test of the start. A pipeline that
// has a checkpoint and finds no bootstrap server reachable is in an outage
// (a task replaced while the cluster restarts, a broker rolled): it tries
// again, with a log line per attempt, for source.outage_window, as the
// source side does, rather than exit and be restarted in a loop. Without a
// checkpoint a cluster never reached is far more likely a wrong address,
// and the start fails at once, as it does for a source never reached.
func reachDestination(ctx context.Context, cfg *config.Config, hasCheckpoint bool, log *slog.Logger) (kafka.Report, error) {
	window := cfg.Source.OutageWindowDuration()
	if window <= 0 {
		window = capture.DefaultOutageWindow
	}
	var since time.Time
	for attempt := 1; ; attempt++ {
		r := kafka.TestConnection(ctx, destination.Kafka(cfg.Destination), cfg.LogicalName(), destination.TestOptions(cfg)...)
		if !r.Unreachable || !hasCheckpoint || ctx.Err() != nil {
			if !since.IsZero() && !r.Unreachable {
				log.Info("Kafka reachable again; starting", "attempts", attempt, "outage", time.Since(since).Round(time.Millisecond).String())
			}
			return r, nil
		}
		now := time.Now()
		if since.IsZero() {
			since = now
		}
		detail := ""
		for _, c := range r.Checks {
			if !c.OK {
				detail = c.Detail
			}
		}
		if now.Sub(since) >= window {
			return r, &startupError{fmt.Sprintf("Kafka unreachable for longer than source.outage_window (%s, %d attempts): %s", window, attempt, detail)}
		}
		wait := min(500*time.Millisecond<<min(attempt-1, 6), 30*time.Second, window-now.Sub(since))
		log.Warn("Kafka unreachable at start; the pipeline has a checkpoint, retrying", "err", detail, "attempt", attempt,
			"retry_in", wait.Round(time.Millisecond).String(), "outage", now.Sub(since).Round(time.Millisecond).String(), "outage_window", window.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return r, ctx.Err()
		case <-t.C:
		}
	}
}
