package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/integration/procstat"
)

// scFleet: the cost of a fleet of small pipelines. A pipeline is one process (one ECS task:
// its own task role is its isolation, docs/operations.md), so the fleet is BENCH_FLEET_PIPELINES
// processes side by side, each with a database of its own on the one PostgreSQL server, its
// own slot and topic. After their initial snapshot they idle for BENCH_FLEET_SECONDS, then
// each takes 100 changes/s (one transaction of 100 a second) for as long. The runs are
// "fleet idle" and "fleet 100/s", per pipeline: RSS (at idle the resident set at the end, under
// load the high-water mark), PSS at the end (the binary's code pages, which the processes
// share, counted once across the fleet) and the share of one core each used.
const (
	scFleet        = "fleet"
	fleetRate      = 100 // changes/s of each pipeline under load
	fleetSettle    = 10 * time.Second
	fleetIdleLabel = scFleet + " idle"
	fleetLoadLabel = scFleet + " 100/s"
)

// fleetScenario runs the fleet and appends its two runs.
func (b *bench) fleetScenario(ctx context.Context) error {
	n, d := b.p.FleetPipelines, time.Duration(b.p.FleetSeconds)*time.Second
	t := tributary{p: b.p}
	worlds := make([]world, n)
	children := make([]*child, n)
	defer func() {
		for _, c := range children {
			if c != nil {
				c.stop(60 * time.Second)
			}
		}
		if b.p.keep {
			return
		}
		for _, w := range worlds {
			if w.db != "" {
				dropDB(context.Background(), w.db)
				deleteTopics(context.Background(), w.topic)
			}
		}
	}()
	b.log.Info("starting the fleet", "pipelines", n)
	for i := range worlds {
		w := newWorld(b.p, sysTributary, scFleet, b.stamp)
		w.db = fmt.Sprintf("%s_%d", w.db, i)
		w.prefix = fmt.Sprintf("%s-%d", w.prefix, i)
		w.topic = w.prefix + ".public.bench"
		w.dir = filepath.Join(w.dir, fmt.Sprint(i))
		w.slot = "tributary_" + w.db
		worlds[i] = w
		if err := createDB(ctx, w.db, ""); err != nil {
			return err
		}
		if err := seed(ctx, w.db); err != nil {
			return err
		}
		if err := createTopic(ctx, w.topic, 1); err != nil {
			return err
		}
		c, err := t.launch(w, "run.log")
		if err != nil {
			return err
		}
		children[i] = c
	}
	for i, c := range children {
		if err := awaitSnapshotted(ctx, c, worlds[i]); err != nil {
			return err
		}
	}
	time.Sleep(fleetSettle)

	idle, err := measureFleet(children, d, procstat.RSSMB, func() error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if err != nil {
		return err
	}
	idle.Scenario = fleetIdleLabel
	b.runs = append(b.runs, idle.run)

	bases := make([]int64, n)
	for i, w := range worlds {
		ends, err := endOffsets(ctx, w.topic)
		if err != nil {
			return err
		}
		bases[i] = sum(ends)
	}
	var batches []int
	load, err := measureFleet(children, d, procstat.PeakRSSMB, func() error {
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make([]error, n)
		batches = make([]int, n)
		for i, w := range worlds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				commits, _, err := loader(ctx, w.db, fleetRate, d, 0)
				mu.Lock()
				batches[i], errs[i] = len(commits), err
				mu.Unlock()
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for i, w := range worlds {
			if _, err := waitForCount(ctx, w.topic, bases[i]+int64(batches[i]*changesPerBatch), time.Minute, children[i].done); err != nil {
				return fmt.Errorf("pipeline %d: %w\n%s", i, err, children[i].tail())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range batches {
		load.Events += int64(k * changesPerBatch)
	}
	load.EventsPerSec = float64(load.Events) / d.Seconds()
	load.CPUSecPerMillion = ptr(load.cpuSeconds / float64(load.Events) * 1e6)
	load.Scenario = fleetLoadLabel
	b.runs = append(b.runs, load.run)
	b.log.Info("fleet done", "pipelines", n, "idle_rss_mb_max", *idle.PeakRSSMB, "idle_core_percent_max", *idle.CorePercent)
	return nil
}

// fleetRun is a fleet's run with the CPU seconds all its processes used.
type fleetRun struct {
	run
	cpuSeconds float64
}

// measureFleet runs phase (which should last d) and returns, per process, the largest RSS
// (rss at the end) and share of a core over d, with their medians in the note.
func measureFleet(children []*child, d time.Duration, rss func(int) (float64, error), phase func() error) (fleetRun, error) {
	cpu0 := make([]float64, len(children))
	for i, c := range children {
		cpu0[i], _ = cpuSeconds(c.pid())
	}
	t0 := time.Now()
	if err := phase(); err != nil {
		return fleetRun{}, err
	}
	secs := max(time.Since(t0), d).Seconds()
	var mbs, anons, psss, cores []float64
	total := 0.0
	for i, c := range children {
		select {
		case <-c.done:
			return fleetRun{}, fmt.Errorf("pipeline %d exited: %v\n%s", i, c.err, c.tail())
		default:
		}
		cpu1, err := cpuSeconds(c.pid())
		if err != nil {
			return fleetRun{}, err
		}
		mb, err := rss(c.pid())
		if err != nil {
			return fleetRun{}, err
		}
		anon, err := procstat.AnonRSSMB(c.pid())
		if err != nil {
			return fleetRun{}, err
		}
		pss, err := procstat.PSSMB(c.pid())
		if err != nil {
			return fleetRun{}, err
		}
		anons, psss = append(anons, anon), append(psss, pss)
		total += cpu1 - cpu0[i]
		mbs, cores = append(mbs, mb), append(cores, (cpu1-cpu0[i])/secs*100)
	}
	slices.Sort(mbs)
	slices.Sort(anons)
	slices.Sort(psss)
	slices.Sort(cores)
	r := fleetRun{cpuSeconds: total}
	r.System = sysTributary
	r.PeakRSSMB, r.CorePercent, r.PSSMB = ptr(mbs[len(mbs)-1]), ptr(cores[len(cores)-1]), ptr(psss[len(psss)-1])
	r.Note = fmt.Sprintf("%d pipelines, %.0f s; per pipeline: RSS median %.1f MB (max %.1f), of it anonymous (not the binary's pages) %.1f MB now; PSS (the binary's pages shared among the fleet) median %.1f MB (max %.1f) now; CPU median %.2f %% of a core (max %.2f)",
		len(children), secs, quantile(mbs, 0.5), mbs[len(mbs)-1], quantile(anons, 0.5), quantile(psss, 0.5), psss[len(psss)-1], quantile(cores, 0.5), cores[len(cores)-1])
	return r, nil
}
