package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A webhook endpoint that redirects is a failed delivery. Go's client
// would follow a 301/302/303 as a GET without the event, the target's 200
// would count as delivered, and the row would be lost unrecorded.
func TestHTTPDoesNotFollowRedirects(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			var posts, followed atomic.Int32
			mux := http.NewServeMux()
			mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
				posts.Add(1)
				w.Header().Set("Location", "/moved/hook?token=s3cr3t-canary")
				w.WriteHeader(code)
			})
			mux.HandleFunc("/moved/hook", func(w http.ResponseWriter, r *http.Request) {
				followed.Add(1)
				w.WriteHeader(http.StatusOK)
			})
			srv := httptest.NewServer(mux) // listens on 127.0.0.1
			defer srv.Close()

			n := NewHTTP(srv.URL+"/hook", "secret", nil).(*httpNotifier)
			n.wait = func(int) time.Duration { return 0 }
			err := n.Notify(context.Background(), event())
			if err == nil {
				t.Fatalf("HTTP %d: Notify succeeded; the redirect was followed %d times", code, followed.Load())
			}
			msg := err.Error()
			if !strings.Contains(msg, "HTTP "+strconv.Itoa(code)+" redirect to /moved/hook") {
				t.Errorf("error does not name the status and the Location: %v", err)
			}
			if strings.Contains(msg, "s3cr3t-canary") {
				t.Errorf("error quotes the Location's query: %v", err)
			}
			if followed.Load() != 0 {
				t.Errorf("the redirect target got %d requests, want none", followed.Load())
			}
			if posts.Load() != 1 {
				t.Errorf("%d POSTs, want 1 (a redirect does not change on retry)", posts.Load())
			}
		})
	}
}

// A caller's client is not changed, and redirects are not followed with
// it either.
func TestHTTPWithOwnClientDoesNotFollowRedirects(t *testing.T) {
	srv := httptest.NewServer(http.RedirectHandler("https://example.invalid/new", http.StatusFound))
	defer srv.Close()
	own := &http.Client{}
	n := NewHTTP(srv.URL, "secret", own).(*httpNotifier)
	n.wait = func(int) time.Duration { return 0 }
	err := n.Notify(context.Background(), event())
	if err == nil || !strings.Contains(err.Error(), "HTTP 302 redirect to https://example.invalid/new") {
		t.Fatalf("Notify: %v, want a failed delivery naming the 302 and its Location", err)
	}
	if own.CheckRedirect != nil {
		t.Error("NewHTTP changed the caller's client")
	}
}
