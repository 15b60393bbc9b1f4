package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestCommandHelpPrintedOnce: `<command> --help` prints its usage once,
// on stdout, and exits 0 (the flag package printed it to stderr too).
func TestCommandHelpPrintedOnce(t *testing.T) {
	for _, c := range commands {
		var stdout, stderr bytes.Buffer
		code := mainExit([]string{c.name, "--help"}, &stdout, &stderr)
		head := fmt.Sprintf("usage: tributary %s ", c.name)
		if code != 0 || strings.Count(stdout.String(), head) != 1 || stderr.Len() != 0 {
			t.Errorf("%s --help: exit %d, usage %d times on stdout, stderr %q; want 0, once, nothing", c.name, code, strings.Count(stdout.String(), head), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"status", "--bogus"}, &stdout, &stderr); code != 2 || strings.Count(stderr.String(), "usage: tributary status") != 1 {
		t.Errorf("status --bogus: exit %d, stderr %q; want 2 with the usage once", code, stderr.String())
	}
}

// TestConfigErrorsHaveOneHeader: the problems of a document follow one
// line naming the file.
func TestConfigErrorsHaveOneHeader(t *testing.T) {
	cfg := writeFile(t, "name: Shop!\n")
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	lines := strings.Split(stderr.String(), "\n")
	if lines[0] != "invalid configuration "+cfg+":" || strings.Contains(stderr.String(), "config "+cfg+":") {
		t.Errorf("stderr:\n%s\nwant one header line, 'invalid configuration %s:'", stderr.String(), cfg)
	}
}

// TestYAMLTabIsNamed: a tab in the indentation is called a tab, with its
// line and column.
func TestYAMLTabIsNamed(t *testing.T) {
	cfg := writeFile(t, "name: shop\nsource:\n\ttype: postgres\n")
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"validate", "--config", cfg}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "a tab at line 3, column 1") {
		t.Errorf("exit %d, stderr:\n%s\nwant 2 naming the tab at line 3, column 1", code, stderr.String())
	}
}

// TestCommandsThatDoNotConnectNeedNoPasswordVariable: validate and status
// load a document whose password variable is unset (validate warns);
// run still refuses it, naming the variable.
func TestCommandsThatDoNotConnectNeedNoPasswordVariable(t *testing.T) {
	cfg := writeFile(t, `name: shop
source:
  type: postgres
  url: postgres://tributary:${env:TRIBUTARY_TEST_UNSET_PW}@127.0.0.1:1/shop
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic_prefix: shop
  disable_tls: true
checkpoint:
  path: `+t.TempDir()+"\n")
	const unset = "environment variable TRIBUTARY_TEST_UNSET_PW is not set"
	for _, cmd := range []string{"validate", "status", "backfill"} {
		var stdout, stderr bytes.Buffer
		args := []string{cmd, "--config", cfg}
		if cmd == "backfill" {
			args = append(args, "--all")
		}
		code := mainExit(args, &stdout, &stderr)
		if code == 2 || cmd != "backfill" && code != 0 {
			t.Errorf("%s: exit %d, want it to work without the variable; stderr:\n%s", cmd, code, stderr.String())
		}
		if cmd == "validate" && !strings.Contains(stderr.String(), "warning: source.url: "+unset) {
			t.Errorf("validate does not warn about the unset variable:\n%s", stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"run", "--config", cfg}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), unset) {
		t.Errorf("run: exit %d, want 2 naming the variable; stderr:\n%s", code, stderr.String())
	}
}
