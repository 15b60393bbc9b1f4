package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// dropPipeline removes what the pipeline keeps outside Kafka's topics:
// its source's leftovers (a replication slot, the publication Tributary
// created, signal table rows), its offsets record and its checkpoint
// (docs/operations.md). It first takes the pipeline as run would (the
// file lock or the lease), so that nothing runs meanwhile, lists what it
// will remove, and asks unless --yes.
func dropPipeline(ctx context.Context, inv *invocation) error {
	cfg := inv.cfg
	kind, w, err := checkpointStore(cfg, inv.log)
	if err != nil {
		return err
	}
	store, err := kind.Hold(ctx, w)
	if errors.Is(err, checkpoint.ErrOwned) {
		return fmt.Errorf("pipeline %s is running (%w): stop it first, then drop it", cfg.Name, err)
	}
	if err != nil {
		return err
	}
	// A drop that fails before it removes the store leaves it as it was:
	// discard removes what the open made (a never-run pipeline's lock file
	// or item), which would make it look as if it had run.
	settled := false
	defer func() {
		if !settled {
			store.Discard(context.WithoutCancel(ctx))
		}
	}()

	// The checkpoint says what on the source is the pipeline's own (its
	// replication slot): a name alone may be another pipeline's. One that
	// cannot be read names nothing: the source keeps what it cannot tell
	// is the pipeline's, saying so, and the rest is dropped.
	cp, _, _, err := kind.Read(ctx, w)
	if err != nil {
		inv.log.Warn("cannot read the checkpoint: a replication slot it would name is kept", "err", err)
	}
	opts := source.OptionsFor(cfg)
	opts.Logger, opts.Leased, opts.Checkpointed = inv.log, leasedStore(cfg), cp.Position
	src, err := capture.New(ctx, opts)
	if err != nil {
		return &usageError{err.Error()}
	}
	defer src.Close()
	dropper, err := src.Dropper()
	if err != nil {
		return &usageError{err.Error()}
	}
	leftovers, err := dropper.Leftovers(ctx)
	if err != nil {
		return fmt.Errorf("%s source: %w", cfg.Source.Type, err)
	}
	offsets, err := findOffsetsRecord(ctx, cfg)
	if err != nil {
		return err
	}

	var remove, keep []string
	for _, l := range leftovers {
		if l.Kept != "" {
			keep = append(keep, fmt.Sprintf("%s %s: %s", l.What, l.Name, l.Kept))
		} else {
			remove = append(remove, l.What+" "+l.Name)
		}
	}
	if offsets {
		remove = append(remove, fmt.Sprintf("offsets record %s in topic %s (a tombstone)", cfg.Name, cfg.OffsetsTopic()))
	}
	remove = append(remove, store.Contents...)
	if len(remove) == 0 {
		fmt.Fprintf(inv.stdout, "nothing left of pipeline %s to drop\n", cfg.Name)
		printList(inv.stdout, "kept", keep)
		settled = true
		return store.Discard(ctx)
	}
	fmt.Fprintf(inv.stdout, "tributary drop removes, for pipeline %s:\n", cfg.Name)
	printList(inv.stdout, "", remove)
	printList(inv.stdout, "and keeps", keep)
	if !inv.yes {
		ok, err := confirm(inv.stdin, inv.stdout)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(inv.stdout, "nothing dropped")
			settled = true
			return store.Discard(ctx)
		}
	}

	if _, err := dropper.Drop(ctx); err != nil {
		return fmt.Errorf("%s source: %w (nothing else was dropped; run drop again once fixed)", cfg.Source.Type, err)
	}
	if offsets {
		if err := tombstoneOffsets(ctx, cfg); err != nil {
			return fmt.Errorf("%w (the checkpoint was kept; run drop again once fixed)", err)
		}
	}
	settled = true
	if err := store.Drop(ctx); err != nil {
		return err
	}
	fmt.Fprintf(inv.stdout, "dropped pipeline %s\n", cfg.Name)
	return nil
}

func printList(w io.Writer, head string, items []string) {
	if len(items) == 0 {
		return
	}
	if head != "" {
		fmt.Fprintf(w, "%s:\n", head)
	}
	for _, it := range items {
		fmt.Fprintf(w, "  - %s\n", it)
	}
}

// confirm asks on the terminal; without one, the answer must be --yes.
func confirm(in io.Reader, out io.Writer) (bool, error) {
	if f, ok := in.(*os.File); !ok || !isTerminal(f) {
		return false, &usageError{"drop: standard input is not a terminal, so drop cannot ask for confirmation: pass --yes to drop without asking"}
	}
	fmt.Fprint(out, "Remove them? Type yes to confirm: ")
	answer, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return strings.TrimSpace(answer) == "yes", nil
}

// kafkaWait bounds each Kafka step of drop: a cluster out of reach fails
// it rather than hanging.
const kafkaWait = 60 * time.Second

// findOffsetsRecord says whether the offsets topic holds the pipeline's
// record (written exactly_once, or by an exactly_once run before).
func findOffsetsRecord(ctx context.Context, cfg *config.Config) (bool, error) {
	topic := cfg.OffsetsTopic()
	if topic == "" {
		return false, nil
	}
	prod, err := kafka.NewProducer(destination.Producer(cfg))
	if err != nil {
		return false, &usageError{err.Error()}
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(ctx, kafkaWait)
	defer cancel()
	found, err := prod.HasOffsetsRecord(ctx, topic, cfg.Name)
	if err != nil {
		return false, fmt.Errorf("look for the pipeline's record in the offsets topic %s: %w", topic, err)
	}
	return found, nil
}

// tombstoneOffsets writes the tombstone with the pipeline's own
// transactional producer.
func tombstoneOffsets(ctx context.Context, cfg *config.Config) error {
	prod, err := kafka.NewTransactionalProducer(destination.Producer(cfg), cfg.TransactionalID())
	if err != nil {
		return &usageError{err.Error()}
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(ctx, kafkaWait)
	defer cancel()
	return prod.TombstoneOffsetsRecord(ctx, cfg.OffsetsTopic(), cfg.Name)
}
