package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// HTTP delivery bounds: about two minutes of attempts before Notify gives
// up and the pipeline stops without moving past the row.
const (
	httpAttempts   = 8
	httpFirstWait  = 500 * time.Millisecond
	httpMaxWait    = 30 * time.Second
	httpTryTimeout = 10 * time.Second
)

type httpNotifier struct {
	url    string
	secret string
	client *http.Client
	wait   func(attempt int) time.Duration
}

// NewHTTP returns a Notifier that POSTs each event as JSON to url, signed
// with secret per Standard Webhooks (headers webhook-id = the event ID,
// webhook-timestamp, webhook-signature; see Sign). A 2xx answer is
// delivery. Network errors, 408, 429 and 5xx are retried with exponential
// backoff (0.5 s doubling, capped at 30 s) up to 8 attempts; any other
// answer, or running out of attempts, is an error. Redirects are not
// followed: a 3xx is a failed delivery naming the status and the Location
// (Go's client would turn a 301/302/303 into a GET without the event, and
// its 200 would count as delivered). client nil means a client with a
// 10 s timeout per attempt. Errors never quote the URL (it may carry a
// token) or the secret, nor a Location's query or user info.
func NewHTTP(url, secret string, client *http.Client) Notifier {
	if client == nil {
		client = &http.Client{Timeout: httpTryTimeout}
	} else {
		c := *client
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &httpNotifier{url: url, secret: secret, client: client, wait: backoff}
}

func backoff(attempt int) time.Duration {
	d := httpFirstWait
	for i := 1; i < attempt && d < httpMaxWait; i++ {
		d *= 2
	}
	return min(d, httpMaxWait)
}

// errPermanent marks an answer that retrying will not change.
var errPermanent = errors.New("not retried")

func (n *httpNotifier) Notify(ctx context.Context, ev RowSkipped) error {
	if ev.Type == "" {
		ev.Type = EventType
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("row.skipped webhook: encode event: %w", err)
	}
	var last error
	for attempt := 1; attempt <= httpAttempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(n.wait(attempt - 1))
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("row.skipped webhook for event %s not delivered: %w (last error: %v)", ev.EventID, ctx.Err(), last)
			case <-t.C:
			}
		}
		last = n.post(ctx, ev.EventID, body)
		if last == nil {
			return nil
		}
		if errors.Is(last, errPermanent) {
			break
		}
	}
	return fmt.Errorf("row.skipped webhook for event %s not delivered: %w", ev.EventID, last)
}

func (n *httpNotifier) post(ctx context.Context, id string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhooks.row_skipped_url is not a valid URL: %w", errPermanent)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("user-agent", "tributary")
	SetHeaders(req.Header, n.secret, id, time.Now(), body)
	resp, err := n.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // drop the URL
		}
		return fmt.Errorf("POST: %v", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c >= 300 && c < 400:
		return fmt.Errorf("POST: HTTP %d redirect to %s, not followed (set webhooks.row_skipped_url to the final address): %w",
			c, shownLocation(resp.Header.Get("Location")), errPermanent)
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("POST: HTTP %d", c)
	default:
		return fmt.Errorf("POST: HTTP %d: %w", c, errPermanent)
	}
}

// shownLocation is a redirect's Location without what may be a secret:
// user info, query and fragment.
func shownLocation(loc string) string {
	if loc == "" {
		return "(no Location header)"
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "(an unparsable Location)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
