package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// scrub takes out of r (Kafka's report, the source's and the schema
// registry's checks) every value that a reference in the pipeline's
// document resolved to: the caller of the API may start a test, not read
// the pipeline's secrets back. A value used as a broker list (e.g.
// bootstrap_servers: ${ssm:/tributary/shop/brokers}) is taken out entry by
// entry and host by host too, since the report shows brokers that way.
func scrub(r *response, resolved []string) {
	whole := scrubber(resolved)
	for i := range r.Brokers {
		b := &r.Brokers[i]
		b.Host, b.Error, b.Cause = whole(b.Host), whole(b.Error), whole(b.Cause)
	}
	for i := range r.Checks {
		r.Checks[i].Detail = whole(r.Checks[i].Detail)
	}
	for _, checks := range [][]source.Check{r.Source, r.Registry} {
		for i := range checks {
			c := &checks[i]
			c.Detail, c.Fix = whole(c.Detail), whole(c.Fix)
		}
	}
}

// scrubber returns a function that takes every value in resolved, and
// the parts of them described at scrub, out of a text.
func scrubber(resolved []string) func(string) string {
	needles := map[string]bool{}
	for _, v := range resolved {
		needles[v] = true
		// A whole source URL from one reference: its user, host and
		// database are parts of the resolved value, and the source's
		// checks (and the servers' errors in them) show them.
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			needles[u.Host], needles[u.Hostname()] = true, true
			if db := strings.Trim(u.Path, "/"); db != "" {
				needles[db] = true
				if d, err := url.PathUnescape(db); err == nil {
					needles[d] = true
				}
			}
			if u.User != nil {
				needles[u.User.Username()] = true
				if pw, ok := u.User.Password(); ok {
					needles[pw] = true
				}
			}
		}
		for _, entry := range strings.Split(v, ",") {
			entry = strings.TrimSpace(entry)
			needles[entry] = true
			if host, _, err := net.SplitHostPort(entry); err == nil {
				needles[host] = true
			}
		}
	}
	delete(needles, "")
	// Longest first, so a value is replaced whole before its parts.
	var list []string
	for n := range needles {
		list = append(list, n)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })

	// Also in the forms messages quote them (%q, JSON); values shorter
	// than four bytes would wipe out ordinary words, but a text equal to
	// one is still replaced whole.
	text := config.NewScrubber(list...)
	return func(s string) string {
		if needles[s] {
			return config.RedactedValue
		}
		return text.String(s)
	}
}

// scrubHandler is the source's logger in a test: the function's own log
// (never slog's default, which also reaches CloudWatch), with the message
// and every attribute passed through text, the request's scrubber. A
// source logs names from the document (tables it did not find), which
// may have been read through a reference.
type scrubHandler struct {
	slog.Handler
	text func(string) string
}

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.attr(a)
	}
	return scrubHandler{Handler: h.Handler.WithAttrs(scrubbed), text: h.text}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{Handler: h.Handler.WithGroup(name), text: h.text}
}

// attr is a with its string values scrubbed; values of other kinds that
// are not numbers, times or booleans (errors, lists) are logged as their
// scrubbed text.
func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.text(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.text(err.Error()))
		}
		return slog.String(a.Key, h.text(fmt.Sprint(v.Any())))
	case slog.KindGroup:
		group := v.Group()
		scrubbed := make([]any, len(group))
		for i, g := range group {
			scrubbed[i] = h.attr(g)
		}
		return slog.Group(a.Key, scrubbed...)
	}
	return slog.Attr{Key: a.Key, Value: v}
}
