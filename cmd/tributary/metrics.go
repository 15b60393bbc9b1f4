package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/metrics"
)

// emfInterval is how often EMF lines are written: twice per alarm period
// (1 min), so a late line never leaves a period without data.
const emfInterval = 30 * time.Second

// emfEnabled reports whether to write CloudWatch EMF lines on stdout:
// TRIBUTARY_METRICS=emf (the CDK task sets it), or running in ECS unless
// TRIBUTARY_METRICS=none.
func emfEnabled() bool {
	switch os.Getenv("TRIBUTARY_METRICS") {
	case "emf":
		return true
	case "none":
		return false
	}
	return os.Getenv("ECS_CONTAINER_METADATA_URI_V4") != ""
}

// startMetrics sets up the pipeline's metrics and their outputs. stop,
// called with run's result once the pipeline has stopped, counts a failure,
// writes the last EMF lines and shuts the HTTP server down.
// addr is run's --http-addr: where GET /metrics serves the Prometheus text
// format; "" serves nothing.
// routes adds the status page and its JSON to the same listener.
func startMetrics(reg *metrics.Registry, m *metrics.Pipeline, scrub *config.Scrubber, log *slog.Logger, stdout io.Writer, addr string, routes func(*http.ServeMux)) (stop func(runErr error) error, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if emfEnabled() {
		emf := metrics.NewEMF(stdout, m)
		wg.Add(1)
		go func() { defer wg.Done(); emf.Run(ctx, emfInterval) }()
	}
	var srv *http.Server
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			cancel()
			wg.Wait()
			return nil, fmt.Errorf("--http-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", scrubbed(reg.Handler(), scrub))
		routes(mux)
		srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics server", "err", err)
			}
		}()
		log.Info("serving metrics and status", "metrics", "http://"+ln.Addr().String()+"/metrics", "status", "http://"+ln.Addr().String()+"/")
	}
	stop = func(runErr error) error {
		if runErr != nil {
			m.Error("run")
		}
		if srv != nil {
			sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
			srv.Shutdown(sctx)
			c()
		}
		cancel()
		wg.Wait()
		return runErr
	}
	return stop, nil
}

// scrubbed serves h's answer with scrub's secrets taken out: a label
// (a topic, a table) may hold a value read through a reference.
func scrubbed(h http.Handler, scrub *config.Scrubber) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &bufferedResponse{header: w.Header(), code: http.StatusOK}
		h.ServeHTTP(rec, req)
		w.WriteHeader(rec.code)
		io.WriteString(w, scrub.String(rec.body.String()))
	})
}

// bufferedResponse holds an answer until it is scrubbed whole.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) WriteHeader(code int)        { b.code = code }
