package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateListsEveryProblemAndExits2(t *testing.T) {
	cfg := writeFile(t, `name: Shop!
source:
  type: postgres
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic_prefix: "shop/orders"
  delete_mode: sometimes
  colour: blue
`)
	var stdout, stderr bytes.Buffer
	code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
	}
	for _, field := range []string{"name", "source.url", "destination.topic_prefix", "destination.delete_mode", "destination.colour"} {
		if !strings.Contains(stderr.String(), field) {
			t.Errorf("stderr does not name %s:\n%s", field, stderr.String())
		}
	}
}

func TestValidateAcceptsAGoodConfig(t *testing.T) {
	cfg := writeFile(t, goodConfig)
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), "secret-canary") {
		t.Error("the password reached the output")
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"run"}, {"run", "--config"}, {"validate", "--config", "/does/not/exist.yaml"}} {
		var stdout, stderr bytes.Buffer
		if code := mainExit(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
