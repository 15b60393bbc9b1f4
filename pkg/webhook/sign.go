package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks headers (https://www.standardwebhooks.com).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a base64-encoded secret, as Standard Webhooks libraries
// print them.
const secretPrefix = "whsec_"

// MinSecretBytes is the shortest HMAC key a signing secret may give: the
// 24 random bytes Standard Webhooks asks for at the least (its libraries
// make 24 to 64). A shorter key can be guessed offline from one signed
// delivery.
const MinSecretBytes = 24

// SecretKey returns the HMAC key of a signing secret: the base64-decoded
// remainder of a "whsec_<base64>" secret, or the secret's own bytes for any
// other string. A "whsec_" secret whose remainder is not base64 is an
// error (the error never quotes the secret).
func SecretKey(secret string) ([]byte, error) {
	if !strings.HasPrefix(secret, secretPrefix) {
		return []byte(secret), nil
	}
	rest := secret[len(secretPrefix):]
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(rest)
	}
	if err != nil || len(key) == 0 {
		return nil, errors.New("webhooks.signing_secret: a whsec_ secret must be followed by base64")
	}
	return key, nil
}

// Sign returns the webhook-signature header value for one delivery:
// "v1," + base64(HMAC-SHA256(key, msgID + "." + unix seconds + "." + body)),
// where key is SecretKey(secret). A "whsec_" secret that is not valid
// base64 is used as raw bytes here; configuration validation reports it.
func Sign(secret string, msgID string, ts time.Time, body []byte) string {
	key, err := SecretKey(secret)
	if err != nil {
		key = []byte(secret)
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, msgID, ts.Unix(), body))
}

func mac(key []byte, msgID string, unix int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msgID))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, unix, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SetHeaders sets the three Standard Webhooks headers on h.
func SetHeaders(h http.Header, secret, msgID string, ts time.Time, body []byte) {
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, Sign(secret, msgID, ts, body))
}

// ErrSignature is returned by Verify for a delivery that is not signed
// with the secret, or is too old or too new.
var ErrSignature = errors.New("webhook signature does not verify")

// Verify checks a delivery's Standard Webhooks headers against secret: one
// of the space-separated v1 signatures must match, and the timestamp must
// be within tolerance of now. It is what a receiver runs; Tributary's tests
// use it too.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := SecretKey(secret)
	if err != nil {
		return err
	}
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return fmt.Errorf("%w: missing %s, %s or %s", ErrSignature, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	unix, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s is not unix seconds", ErrSignature, HeaderTimestamp)
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: timestamp outside the tolerance of %s", ErrSignature, tolerance)
	}
	want := mac(key, id, unix, body)
	for _, s := range strings.Fields(sigs) {
		version, b64, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}
