package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// ErrCorrupt is wrapped by Load when the checkpoint file cannot be read
// back. A corrupt checkpoint is never treated as "no checkpoint": that
// would silently restart the pipeline from scratch.
var ErrCorrupt = errors.New("checkpoint: corrupt checkpoint file")

// fileVersion is the format written by Save; Load refuses newer ones.
const fileVersion = 1

// maxFileBytes bounds what Load reads: a position is a few hundred bytes.
const maxFileBytes = 16 << 20

var validPipeline = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*$`)

// File is the local checkpoint store, the default outside AWS. It keeps
// <dir>/<pipeline>.checkpoint.json, replaced atomically on every Save, and
// owns the pipeline through an exclusive flock on <dir>/<pipeline>.lock for
// as long as it is open. The lock is released by Close or by the process
// dying, so a crashed owner never blocks the next one.
type File struct {
	pipeline string
	dir      string
	path     string

	mu   sync.Mutex
	lock *os.File // nil once closed
	// closed is set by Close. Owned reads it instead of taking mu, which
	// Save holds through its writes and fsyncs: the pipeline asks Owned
	// before every event and every write to a broker, and must not wait out
	// a Save's fsyncs (docs/hot-path.md).
	closed atomic.Bool
}

var _ Store = (*File)(nil)

// OpenFile opens the store for pipeline in dir, creating dir (0700) when
// missing, and takes ownership of the pipeline. When another store holds
// it, in this process or another, the error wraps ErrOwned and names the
// lock file.
func OpenFile(dir, pipeline string) (*File, error) {
	if !validPipeline.MatchString(pipeline) {
		return nil, fmt.Errorf("checkpoint: pipeline name %q cannot name a file", pipeline)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	lockPath := filepath.Join(dir, pipeline+".lock")
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := tryLock(lock); err != nil {
		holder := lockHolder(lockPath)
		lock.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%w: lock %s is held%s", ErrOwned, lockPath, holder)
		}
		return nil, fmt.Errorf("checkpoint: lock %s: %w", lockPath, err)
	}
	// The PID is only a hint for the error above; the flock is the lock.
	if err := lock.Truncate(0); err == nil {
		lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}

	f := &File{
		pipeline: pipeline,
		dir:      dir,
		path:     filepath.Join(dir, pipeline+".checkpoint.json"),
		lock:     lock,
	}
	// Temporary files left by a crash mid-Save are garbage; holding the
	// lock, nobody else is writing one.
	if stale, err := filepath.Glob(f.path + ".tmp-*"); err == nil {
		for _, s := range stale {
			os.Remove(s)
		}
	}
	return f, nil
}

func lockHolder(lockPath string) string {
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return ""
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		return fmt.Sprintf(" (by process %d, or another store in it)", pid)
	}
	return ""
}

// Path is the checkpoint file's path.
func (f *File) Path() string { return f.path }

// Load returns the saved checkpoint, found false when none was ever saved.
// A file that does not decode is an error wrapping ErrCorrupt.
func (f *File) Load(ctx context.Context) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return Checkpoint{}, false, errClosed
	}
	data, err := readLimited(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: %w", err)
	}
	if len(data) > maxFileBytes {
		return Checkpoint{}, false, fmt.Errorf("%w %s: larger than %d MiB", ErrCorrupt, f.path, maxFileBytes>>20)
	}
	cp, err := decodeFile(data, f.pipeline)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("%w %s: %v", ErrCorrupt, f.path, err)
	}
	return cp, true, nil
}

// Save replaces the checkpoint: it writes a temporary file in the same
// directory, syncs it, renames it over the old one and syncs the
// directory, so after a crash the file holds either the old checkpoint or
// the new one, whole. cp.Pipeline may be empty (it is filled in) but not
// another pipeline; a zero UpdatedAt becomes now.
func (f *File) Save(ctx context.Context, cp Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if cp.Pipeline == "" {
		cp.Pipeline = f.pipeline
	}
	if cp.UpdatedAt.IsZero() {
		cp.UpdatedAt = time.Now().UTC()
	}
	data, err := encodeFile(cp, f.pipeline)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return errClosed
	}
	if err := writeAtomic(f.dir, f.path, data); err != nil {
		return fmt.Errorf("checkpoint: save %s: %w", f.path, err)
	}
	return nil
}

// Owned implements Store: the flock holds until Close or the process ends.
func (f *File) Owned() error {
	if f.closed.Load() {
		return fmt.Errorf("%w: %w", ErrLeaseLost, errClosed)
	}
	return nil
}

// Lost implements Store: a flock is never lost while the process lives.
func (f *File) Lost() <-chan struct{} { return nil }

// Close releases the pipeline. Later calls do nothing.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lock == nil {
		return nil
	}
	// Closing the descriptor drops the flock. The lock file stays:
	// removing it would let two openers lock two different files.
	f.closed.Store(true)
	err := f.lock.Close()
	f.lock = nil
	if err != nil {
		return fmt.Errorf("checkpoint: release lock: %w", err)
	}
	return nil
}

var errClosed = errors.New("checkpoint: store is closed")

func writeAtomic(dir, path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// The rename is durable only once the directory entry is.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readLimited reads path, or its first maxFileBytes+1 bytes when larger.
func readLimited(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(fh, maxFileBytes+1)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fileFormat is the checkpoint file. Position is the source's JSON, kept
// as JSON rather than base64 so a person can read the file.
type fileFormat struct {
	Version   int             `json:"version"`
	Pipeline  string          `json:"pipeline"`
	Position  json.RawMessage `json:"position"`
	UpdatedAt time.Time       `json:"updated_at"`
	Receipts  json.RawMessage `json:"receipts,omitempty"`
	Delivery  string          `json:"delivery,omitempty"`
}

func encodeFile(cp Checkpoint, pipeline string) ([]byte, error) {
	if cp.Pipeline != pipeline {
		return nil, fmt.Errorf("checkpoint: saving pipeline %q in the store of %q", cp.Pipeline, pipeline)
	}
	w := fileFormat{Version: fileVersion, Pipeline: cp.Pipeline, UpdatedAt: cp.UpdatedAt, Delivery: cp.Delivery}
	if cp.Position != nil {
		if !json.Valid(cp.Position) {
			return nil, errors.New("checkpoint: position is not valid JSON")
		}
		w.Position = json.RawMessage(cp.Position)
	}
	receipts, err := encodeReceipts(cp.Receipts)
	if err != nil {
		return nil, err
	}
	w.Receipts = receipts
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("checkpoint: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeFile reads a checkpoint file's bytes; its errors say what is wrong
// without quoting the content.
func decodeFile(data []byte, pipeline string) (Checkpoint, error) {
	var w fileFormat
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return Checkpoint{}, fmt.Errorf("not a checkpoint: %v", err)
	}
	if dec.More() {
		return Checkpoint{}, errors.New("not a checkpoint: data after the JSON object")
	}
	if w.Version < 1 || w.Version > fileVersion {
		return Checkpoint{}, fmt.Errorf("unsupported format version %d", w.Version)
	}
	if w.Pipeline != pipeline {
		return Checkpoint{}, fmt.Errorf("holds pipeline %q, not %q", w.Pipeline, pipeline)
	}
	cp := Checkpoint{Pipeline: w.Pipeline, UpdatedAt: w.UpdatedAt, Delivery: w.Delivery}
	if len(w.Position) > 0 && !bytes.Equal(w.Position, []byte("null")) {
		// Save indents the file; hand the source back compact JSON, byte
		// for byte what it saved when that was compact.
		var pos bytes.Buffer
		if err := json.Compact(&pos, w.Position); err != nil {
			return Checkpoint{}, fmt.Errorf("position: %v", err)
		}
		cp.Position = change.Position(pos.Bytes())
	}
	rs, err := decodeReceipts(w.Receipts)
	if err != nil {
		return Checkpoint{}, err
	}
	cp.Receipts = rs
	return cp, nil
}
