package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// onceHandler drops a record identical to one already logged (level,
// message and attributes). The report commands (tables, test-connection)
// ask the source the same questions several times (the listing, each
// check), and a driver's note about a table would otherwise be repeated
// once per question; run keeps every line, where a repeat is news.
type onceHandler struct {
	inner slog.Handler
	seen  *onceSeen
}

type onceSeen struct {
	mu sync.Mutex
	m  map[string]bool
}

func logOnce(l *slog.Logger) *slog.Logger {
	return slog.New(onceHandler{inner: l.Handler(), seen: &onceSeen{m: map[string]bool{}}})
}

func (h onceHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h onceHandler) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, "\x00%s=%v", a.Key, a.Value)
		return true
	})
	key := b.String()
	h.seen.mu.Lock()
	dup := h.seen.m[key]
	h.seen.m[key] = true
	h.seen.mu.Unlock()
	if dup {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h onceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return onceHandler{inner: h.inner.WithAttrs(as), seen: h.seen}
}

func (h onceHandler) WithGroup(name string) slog.Handler {
	return onceHandler{inner: h.inner.WithGroup(name), seen: h.seen}
}
