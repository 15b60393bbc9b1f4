package capture

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// gate is a loop that fails with EOF (unreachable) until open is
// closed, then connects and streams until ctx ends.
type gate struct{ open chan struct{} }

func (g *gate) Run(ctx context.Context, _ change.Position, _ func(context.Context, *change.Event) error) error {
	select {
	case <-g.open:
		source.MarkConnected(ctx)
		<-ctx.Done()
		return ctx.Err()
	default:
		return io.ErrUnexpectedEOF
	}
}

// State says "reconnecting" while the source is unreachable, since when,
// after how many attempts and with the last error classified; then
// "streaming" once it is back.
func TestConnState(t *testing.T) {
	g := &gate{open: make(chan struct{})}
	r := &reconnector{run: g.Run, Window: time.Minute, MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, Log: quietLog()}
	if st := r.State(); st.State != source.ConnConnecting {
		t.Errorf("before Run: %+v, want connecting", st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.Run(ctx, change.Position(`{"checkpoint":1}`), nil) }() // a restart: retried
	waitState(t, r, func(st source.ConnState) bool { return st.State == source.ConnReconnecting && st.Attempts >= 3 })
	st := r.State()
	if st.Since.Before(start.Add(-time.Second)) || st.LastErrorClass != "retriable" ||
		!strings.Contains(st.LastError, "unexpected EOF") || st.OutageWindow != "1m0s" {
		t.Errorf("while unreachable: %+v", st)
	}
	since := st.Since
	waitState(t, r, func(st source.ConnState) bool { return st.Attempts >= 5 })
	if st := r.State(); !st.Since.Equal(since) {
		t.Errorf("since moved from %s to %s within one outage", since, st.Since)
	}
	close(g.open)
	waitState(t, r, func(st source.ConnState) bool { return st.State == source.ConnStreaming })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v", err)
	}
}

func waitState(t *testing.T, r *reconnector, ok func(source.ConnState) bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if ok(r.State()) {
			return
		}
	}
	t.Fatalf("state %+v", r.State())
}
