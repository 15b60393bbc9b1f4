package avro_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// syncBuffer is a log sink that the recoder writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDeniedRegistrationSaysSo: a registry that refuses the pipeline's
// credentials (HTTP 403) is not reported as unreachable: the recoder
// waits, as for any failed registration, and its log names the denial
// and the grant that fixes it. (An httptest registry: the test registry
// runs without authentication and cannot answer 403 on demand.)
func TestDeniedRegistrationSaysSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error_code":40301,"message":"User is denied operation Write on Subject: t-value"}`))
	}))
	defer srv.Close()
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	rec := &avro.Recoder{Registry: reg, Value: true, RetryEvery: 20 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	msg := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"a"}],"optional":false,"name":"r"},"payload":{"a":"x"}}`
	_, err = rec.RecodeValue(ctx, "t", []byte(msg))
	var denied *avro.DeniedError
	if !errors.As(err, &denied) {
		t.Fatalf("RecodeValue = %v; want it to wait and end with the denial", err)
	}
	out := logs.String()
	for _, want := range []string{"schema registry denied this pipeline the call", "User is denied operation Write", "right to read and register the subjects"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unreachable") {
		t.Errorf("a denial logged as unreachable:\n%s", out)
	}
}
