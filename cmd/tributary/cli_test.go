package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestHelpExits0OnStdoutListingEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		if code := mainExit(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d, want 0", args, code)
		}
		for _, name := range []string{"run", "validate", "status", "test-connection", "version"} {
			if !strings.Contains(stdout.String(), "  "+name+" ") {
				t.Errorf("%v: usage does not list %s:\n%s", args, name, stdout.String())
			}
		}
		if stderr.Len() > 0 {
			t.Errorf("%v: help wrote to stderr: %s", args, stderr.String())
		}
	}
}

func TestCommandHelpExits0WithItsFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"run", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, stderr.String())
	}
	for _, flag := range []string{"-config", "-http-addr", "-log-level", "-log-format"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("run --help does not list %s:\n%s", flag, stdout.String())
		}
	}
}

func TestVersionPrintsBuildInformation(t *testing.T) {
	version, commit = "v1.2.3", "abc123"
	t.Cleanup(func() { version, commit = "", "" })
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout, stderr bytes.Buffer
		if code := mainExit(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if got := stdout.String(); !strings.Contains(got, "v1.2.3") || !strings.Contains(got, "abc123") || !strings.Contains(got, "go1.") {
			t.Errorf("%v: %q lacks the version, commit or Go version", args, got)
		}
	}
}

func TestBadLogFlagsExit2(t *testing.T) {
	cfg := writeFile(t, goodConfig)
	for _, args := range [][]string{
		{"validate", "--config", cfg, "--log-level", "loud"},
		{"validate", "--config", cfg, "--log-format", "xml"},
	} {
		var stdout, stderr bytes.Buffer
		if code := mainExit(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

const goodConfig = `name: shop
source:
  type: postgres
  url: postgres://u:secret-canary@127.0.0.1:5432/shop
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic_prefix: shop
  disable_tls: true
`

// What run refuses at configuration time, validate refuses with the same
// words, before anything connects.
func TestValidateRefusesWhatRunRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, field, words string }{
		{"source not built", strings.Replace(goodConfig, "type: postgres", "type: sqlserver", 1), "source.type", "sqlserver is not built in this release"},
		{"sqlserver", strings.Replace(goodConfig, "type: postgres", "type: sqlserver", 1), "source.type", "sqlserver is not built in this release"},
		{"snapshot mode", strings.Replace(goodConfig, "type: postgres\n", "type: postgres\n  snapshot_mode: schema_only\n", 1), "source.snapshot_mode", "must be initial, initial_only, no_data (or never), or when_needed"},
		{"whsec not base64", goodConfig + "webhooks:\n  row_skipped_url: https://h.example/x\n  signing_secret: whsec_!!!\n", "webhooks.signing_secret", "a whsec_ secret must be followed by base64"},
		{"url pgx refuses", strings.Replace(goodConfig, "/shop\n", "/shop?sslmode=sometimes\n", 1), "source.url", "not a valid PostgreSQL connection URL"},
		{"unsigned webhook", goodConfig + "webhooks:\n  row_skipped_url: https://h.example/x\n", "webhooks.signing_secret", "required with row_skipped_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeFile(t, tc.doc)
			for _, cmd := range []string{"validate", "run"} {
				var stdout, stderr bytes.Buffer
				if code := mainExit([]string{cmd, "--config", cfg}, &stdout, &stderr); code != 2 {
					t.Fatalf("%s: exit %d, want 2; stderr:\n%s", cmd, code, stderr.String())
				}
				if !strings.Contains(stderr.String(), tc.field+": "+tc.words) {
					t.Errorf("%s: stderr lacks %q:\n%s", cmd, tc.field+": "+tc.words, stderr.String())
				}
			}
		})
	}
}

func TestValidateWarnsAboutSettingsWithNoEffect(t *testing.T) {
	doc := strings.Replace(goodConfig, "  disable_tls: true\n", "  disable_tls: true\n  username: u\n  password: secret-canary2\n", 1)
	cfg := writeFile(t, doc)
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0 (warnings only); stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{
		"warning: destination.username: has no effect with authentication NONE",
		"warning: destination.password: has no effect with authentication NONE",
		"(line 10, column 3)",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), "secret-canary2") {
		t.Error("the password reached the output")
	}
}

func TestValidateSuggestsTheKeyMeant(t *testing.T) {
	cfg := writeFile(t, strings.Replace(goodConfig, "bootstrap_servers", "bootstrap_server", 1))
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if want := "destination.bootstrap_server: unknown key; did you mean `bootstrap_servers`? (line 6, column 3)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}
