package webhook

import (
	"net/http"
	"testing"
	"time"
)

// FuzzVerify feeds outside bytes (headers, body, secret) to Verify: it must
// not panic, and must accept only what Sign made.
func FuzzVerify(f *testing.F) {
	ts := time.Unix(1614265330, 0)
	f.Add("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte(`{"test": 2432232314}`))
	f.Add("raw", "id", "-1", "v1, v2,x v1,====", []byte{})
	f.Add("whsec_", "", "99999999999999999999", "", []byte("x"))
	f.Fuzz(func(t *testing.T, secret, id, tsText, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, tsText)
		h.Set(HeaderSignature, sig)
		_ = Verify(secret, h, body, ts, time.Hour)
		// Whatever was received, a fresh signature over it verifies.
		if id != "" && len(id) < 1000 {
			if _, kerr := SecretKey(secret); kerr == nil {
				h2 := http.Header{}
				SetHeaders(h2, secret, id, ts, body)
				if err := Verify(secret, h2, body, ts, time.Minute); err != nil && h2.Get(HeaderID) == id {
					t.Fatalf("own signature does not verify: %v", err)
				}
			}
		}
	})
}
