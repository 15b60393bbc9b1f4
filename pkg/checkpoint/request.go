package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Request asks a pipeline to snapshot tables again (op r) while it
// streams: `tributary backfill` and the API write it into the checkpoint
// store, without taking the pipeline over; the running pipeline (or the
// next `run`) hands it to its source and clears what it handed over once
// a checkpoint carries it. Requests merge: a second one adds its tables.
type Request struct {
	All    bool     `json:"all,omitempty"`    // every captured table
	Tables []string `json:"tables,omitempty"` // as source.tables writes them; sorted, unique

	// Set by the stores' reads, so that the pipeline tells a table asked
	// for again after it took the table from one it took and has not
	// cleared yet: Stamp changes with every request written, only ever
	// growing (0 when the writers predate it); Last is the latest
	// request's own tables, and LastAfter the Stamp it was written on.
	Stamp     uint64   `json:"-"`
	Last      *Request `json:"-"`
	LastAfter uint64   `json:"-"`
}

// ErrRequestedSince is ClearBackfill's answer when a request was written
// after handed was read (its Stamp moved): nothing is cleared, and the
// next read hands on what was asked again.
var ErrRequestedSince = errors.New("checkpoint: a backfill was requested since the request was read; not cleared")

// Again is what pending, read now, asks for that handed (read earlier,
// handed to the source and not cleared) does not already cover: tables
// not handed, and, when requests were written since handed was read, the
// tables they asked for again (the latest one's own when it is the only
// one, otherwise every table pending, since which were asked again is not
// known), with pending's stamp.
func (pending Request) Again(handed Request) Request {
	fresh := pending.Minus(handed)
	if handed.Empty() || pending.Stamp == handed.Stamp {
		return fresh
	}
	again := Request{}.Merge(pending)
	if pending.Last != nil && pending.LastAfter == handed.Stamp {
		again = fresh.Merge(*pending.Last)
	}
	again.Stamp = pending.Stamp
	return again
}

// Empty reports whether r asks for nothing.
func (r Request) Empty() bool { return !r.All && len(r.Tables) == 0 }

// Merge returns r with o's tables added.
func (r Request) Merge(o Request) Request {
	out := Request{All: r.All || o.All, Tables: append(slices.Clone(r.Tables), o.Tables...)}
	slices.Sort(out.Tables)
	out.Tables = slices.Compact(out.Tables)
	return out
}

// Minus returns r without what handed asked for: what arrived after it
// was read. It keeps r's stamp, as the same read's.
func (r Request) Minus(handed Request) Request {
	out := Request{All: r.All && !handed.All, Stamp: r.Stamp, Last: r.Last, LastAfter: r.LastAfter}
	for _, t := range r.Tables {
		if !slices.Contains(handed.Tables, t) {
			out.Tables = append(out.Tables, t)
		}
	}
	return out
}

// Requests is implemented by the stores that keep backfill requests (both
// do): the running pipeline reads and clears them. Writing one is for
// processes that do not own the pipeline: RequestBackfillFile,
// RequestBackfillDynamoDB.
type Requests interface {
	// PendingBackfill returns the request waiting (Empty when none).
	PendingBackfill(ctx context.Context) (Request, error)
	// ClearBackfill removes what handed asks for, unless a request was
	// written since handed was read (ErrRequestedSince, nothing cleared).
	ClearBackfill(ctx context.Context, handed Request) error
}

// ErrNeverRan is wrapped by the request writers when the pipeline has no
// state in the store: it never started, and its first run backfills
// every table anyway.
var ErrNeverRan = errors.New("checkpoint: the pipeline has never run")

var (
	_ Requests = (*File)(nil)
	_ Requests = (*DynamoDB)(nil)
)

// requestFile is <pipeline>.backfill.json, beside the checkpoint.
type requestFile struct {
	Version     int       `json:"version"`
	Pipeline    string    `json:"pipeline"`
	All         bool      `json:"all,omitempty"`
	Tables      []string  `json:"tables,omitempty"`
	RequestedAt time.Time `json:"requested_at"`
	// Request.Stamp, Last and LastAfter. The stamp is the time of the
	// request in nanoseconds, or one more than the one before when the
	// clock gives less, so that it grows across the file's removal too. A
	// binary from before them reads such a file as corrupt: the CLI that
	// writes a request and the pipeline that reads it upgrade together.
	Stamp      uint64   `json:"stamp,omitempty"`
	LastAll    bool     `json:"last_all,omitempty"`
	LastTables []string `json:"last_tables,omitempty"`
	LastAfter  uint64   `json:"last_after,omitempty"`
}

func requestPath(dir, pipeline string) string {
	return filepath.Join(dir, pipeline+".backfill.json")
}

// RequestBackfillFile adds r to the pending request of pipeline in the
// file store in dir. It takes only the request's own lock (a flock on
// <pipeline>.backfill.lock, held for the read-modify-write), never the
// pipeline's, and replaces the file atomically. ErrNeverRan when the
// pipeline has neither a lock file nor a checkpoint in dir.
func RequestBackfillFile(dir, pipeline string, r Request) error {
	if !validPipeline.MatchString(pipeline) {
		return fmt.Errorf("checkpoint: pipeline name %q cannot name a file", pipeline)
	}
	if r.Empty() {
		return errors.New("checkpoint: a backfill request needs tables or all")
	}
	_, lerr := os.Stat(filepath.Join(dir, pipeline+".lock"))
	_, cerr := os.Stat(filepath.Join(dir, pipeline+".checkpoint.json"))
	if errors.Is(lerr, os.ErrNotExist) && errors.Is(cerr, os.ErrNotExist) {
		return fmt.Errorf("%w: no lock file or checkpoint for %s in %s", ErrNeverRan, pipeline, dir)
	}
	return updateRequestFile(dir, pipeline, func(cur Request) (Request, error) {
		next, last := cur.Merge(r), Request{}.Merge(r)
		next.Stamp = max(cur.Stamp+1, uint64(time.Now().UnixNano()))
		next.Last, next.LastAfter = &last, cur.Stamp
		return next, nil
	})
}

// PendingFile reads the pending request of pipeline in dir, for status
// displays and the owner.
func PendingFile(dir, pipeline string) (Request, error) {
	data, err := os.ReadFile(requestPath(dir, pipeline))
	if errors.Is(err, os.ErrNotExist) {
		return Request{}, nil
	}
	if err != nil {
		return Request{}, fmt.Errorf("checkpoint: %w", err)
	}
	return decodeRequestFile(data, pipeline)
}

func decodeRequestFile(data []byte, pipeline string) (Request, error) {
	var f requestFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Request{}, fmt.Errorf("%w: backfill request of %s: %v", ErrCorrupt, pipeline, err)
	}
	if f.Version < 1 || f.Version > fileVersion || f.Pipeline != pipeline {
		return Request{}, fmt.Errorf("%w: backfill request of %s: version %d, pipeline %q", ErrCorrupt, pipeline, f.Version, f.Pipeline)
	}
	r := Request{}.Merge(Request{All: f.All, Tables: f.Tables})
	r.Stamp = f.Stamp
	if f.Stamp > 0 {
		r.Last, r.LastAfter = &Request{All: f.LastAll, Tables: f.LastTables}, f.LastAfter
	}
	return r, nil
}

// updateRequestFile applies change to the request file under its lock;
// an empty result removes the file.
func updateRequestFile(dir, pipeline string, change func(Request) (Request, error)) error {
	lock, err := os.OpenFile(filepath.Join(dir, pipeline+".backfill.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: backfill request: %w", err)
	}
	defer lock.Close() // drops the flock
	if err := waitLock(lock); err != nil {
		return fmt.Errorf("checkpoint: lock the backfill request of %s: %w", pipeline, err)
	}
	cur, err := PendingFile(dir, pipeline)
	if err != nil {
		return err
	}
	next, err := change(cur)
	if err != nil {
		return err
	}
	path := requestPath(dir, pipeline)
	if next.Empty() {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checkpoint: clear the backfill request: %w", err)
		}
		return nil
	}
	f := requestFile{Version: fileVersion, Pipeline: pipeline, All: next.All, Tables: next.Tables,
		RequestedAt: time.Now().UTC(), Stamp: next.Stamp, LastAfter: next.LastAfter}
	if next.Last != nil {
		f.LastAll, f.LastTables = next.Last.All, next.Last.Tables
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: encode the backfill request: %w", err)
	}
	if err := writeAtomic(dir, path, append(data, '\n')); err != nil {
		return fmt.Errorf("checkpoint: write %s: %w", path, err)
	}
	return nil
}

// PendingBackfill implements Requests.
func (f *File) PendingBackfill(ctx context.Context) (Request, error) {
	if err := ctx.Err(); err != nil {
		return Request{}, err
	}
	return PendingFile(f.dir, f.pipeline)
}

// ClearBackfill implements Requests.
func (f *File) ClearBackfill(ctx context.Context, handed Request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.Owned(); err != nil {
		return err
	}
	return updateRequestFile(f.dir, f.pipeline, func(cur Request) (Request, error) {
		if cur.Stamp != handed.Stamp {
			return cur, ErrRequestedSince
		}
		return cur.Minus(handed), nil
	})
}
