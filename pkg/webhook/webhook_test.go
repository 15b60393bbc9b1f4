package webhook

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The example of the Standard Webhooks specification.
func TestSignStandardVector(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	ts := time.Unix(1614265330, 0)
	body := []byte(`{"test": 2432232314}`)
	if got := Sign(secret, id, ts, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	h := http.Header{}
	SetHeaders(h, secret, id, ts, body)
	if err := Verify(secret, h, body, ts.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := Verify(secret, h, append(body, ' '), ts, 5*time.Minute); err == nil {
		t.Fatal("a changed body verified")
	}
	if err := Verify(secret, h, body, ts.Add(time.Hour), 5*time.Minute); err == nil {
		t.Fatal("an old delivery verified")
	}
	// A raw secret signs with its own bytes.
	if Sign("raw-secret", id, ts, body) == Sign("other", id, ts, body) {
		t.Fatal("raw secrets sign alike")
	}
	if _, err := SecretKey("whsec_***"); err == nil || strings.Contains(err.Error(), "***") {
		t.Fatalf("bad whsec secret: %v", err)
	}
}

func event() RowSkipped {
	return RowSkipped{EventID: "ev-1", Pipeline: "shop", Topic: "shop.public.orders", Table: "public.orders",
		PrimaryKey: map[string]any{"id": 7}, SizeBytes: 2 << 20, LimitBytes: 1 << 20, Reason: "message too large",
		Time: time.Unix(1700000000, 0).UTC()}
}

func TestHTTPRetriesThenDelivers(t *testing.T) {
	const secret = "whsec_" + "c2VjcmV0LWNhbmFyeS0xMjM0NQ==" // "secret-canary-12345"
	var calls atomic.Int32
	var got RowSkipped
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := Verify(secret, r.Header, body, time.Now(), time.Minute); err != nil {
			t.Errorf("delivery does not verify: %v", err)
		}
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		json.Unmarshal(body, &got)
	}))
	defer srv.Close()
	n := NewHTTP(srv.URL+"/hook?token=url-canary", secret, srv.Client()).(*httpNotifier)
	n.wait = func(int) time.Duration { return time.Millisecond }
	if err := n.Notify(context.Background(), event()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || got.Type != EventType || got.EventID != "ev-1" || got.PrimaryKey["id"] != float64(7) {
		t.Fatalf("calls %d, got %+v", calls.Load(), got)
	}
}

func TestHTTPGivesUp(t *testing.T) {
	const secret = "secret-canary-67890"
	for _, tc := range []struct {
		status    int
		wantCalls int32
	}{{http.StatusInternalServerError, httpAttempts}, {http.StatusBadRequest, 1}} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.WriteHeader(tc.status)
		}))
		n := NewHTTP(srv.URL+"/hook?token=url-canary", secret, nil).(*httpNotifier)
		n.wait = func(int) time.Duration { return time.Millisecond }
		err := n.Notify(context.Background(), event())
		srv.Close()
		if err == nil || calls.Load() != tc.wantCalls {
			t.Fatalf("status %d: err %v after %d calls, want an error after %d", tc.status, err, calls.Load(), tc.wantCalls)
		}
		if strings.Contains(err.Error(), "canary") {
			t.Fatalf("error leaks the URL or secret: %v", err)
		}
	}
	// A refused connection: the error names neither URL nor secret.
	n := NewHTTP("http://127.0.0.1:1/hook?token=url-canary", secret, nil).(*httpNotifier)
	n.wait = func(int) time.Duration { return time.Millisecond }
	if err := n.Notify(context.Background(), event()); err == nil || strings.Contains(err.Error(), "canary") {
		t.Fatalf("refused connection: %v", err)
	}
}

func TestBackoffCapped(t *testing.T) {
	if backoff(1) != httpFirstWait || backoff(2) != 2*httpFirstWait || backoff(20) != httpMaxWait {
		t.Fatal(backoff(1), backoff(2), backoff(20))
	}
}

func TestFileAppendsLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "shop.row-skipped.jsonl")
	n := NewFile(path, nil)
	for i := 0; i < 2; i++ {
		if err := n.Notify(context.Background(), event()); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	var lines int
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var ev RowSkipped
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Type != EventType || ev.SizeBytes != 2<<20 {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
	}
	if lines != 2 {
		t.Fatalf("%d lines", lines)
	}
}
