package main

import "testing"

// TestOrigin: only scheme and host of a webhook URL reach a log line; the
// path, query and user info are where webhook credentials sit.
func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/secrettoken":  "https://hooks.slack.com",
		"https://user:secret@example.com:8443/x?token=secret": "https://example.com:8443",
		"http://[::1]:9000/a#frag":                            "http://[::1]:9000",
		"::not a url":                                         "(unparsable URL)",
		"/relative/secret":                                    "(unparsable URL)",
	} {
		if got := origin(in); got != want {
			t.Errorf("origin(%q) = %q, want %q", in, got, want)
		}
	}
}
