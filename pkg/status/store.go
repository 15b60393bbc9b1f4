package status

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// Sink stores one Live snapshot (JSON) where readers find it.
type Sink func(ctx context.Context, snapshot []byte) error

// Decode reads a snapshot; nil data is no snapshot.
func Decode(data []byte) (*Live, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var l Live
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("status: snapshot does not decode: %w", err)
	}
	return &l, nil
}

// Publish writes the recorder's snapshot to sink every interval until ctx
// is done, then once more marked stopped, so readers tell a stopped
// pipeline from a running one at once. A failed write is logged at debug
// level: the status is a convenience, never a reason to stop publishing.
func Publish(ctx context.Context, r *Recorder, sink Sink, interval time.Duration, log *slog.Logger) {
	write := func(ctx context.Context) {
		data, _ := json.Marshal(r.Snapshot()) // plain data: cannot fail
		if err := sink(ctx, data); err != nil && log != nil {
			log.Debug("status snapshot not saved", "err", err)
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		write(ctx)
		select {
		case <-ctx.Done():
			r.Stopped()
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			write(wctx)
			cancel()
			return
		case <-t.C:
		}
	}
}
