package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

type fileNotifier struct {
	path string
	log  *slog.Logger
	mu   sync.Mutex
}

// NewFile returns a Notifier that appends each event as one JSON line to
// path (created with mode 0600, its folder with 0700) and fsyncs it before
// Notify returns, then logs a warning naming the row. It is the local
// stand-in for a webhook when webhooks.row_skipped_url is not set. log nil
// means slog.Default().
func NewFile(path string, log *slog.Logger) Notifier {
	if log == nil {
		log = slog.Default()
	}
	return &fileNotifier{path: path, log: log}
}

func (n *fileNotifier) Notify(_ context.Context, ev RowSkipped) error {
	if ev.Type == "" {
		ev.Type = EventType
	}
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("row.skipped file: encode event: %w", err)
	}
	line = append(line, '\n')
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.append(line); err != nil {
		return fmt.Errorf("row.skipped file %s: %w", n.path, err)
	}
	n.log.Warn("row skipped", "event_id", ev.EventID, "topic", ev.Topic, "table", ev.Table,
		"primary_key", ev.PrimaryKey, "size_bytes", ev.SizeBytes, "limit_bytes", ev.LimitBytes,
		"reason", ev.Reason, "recorded_in", n.path)
	return nil
}

func (n *fileNotifier) append(line []byte) error {
	dir := filepath.Dir(n.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_, statErr := os.Stat(n.path)
	f, err := os.OpenFile(n.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if os.IsNotExist(statErr) {
		// A new file is durable only once its directory entry is.
		if d, err := os.Open(dir); err == nil {
			err = d.Sync()
			d.Close()
			return err
		}
	}
	return nil
}
