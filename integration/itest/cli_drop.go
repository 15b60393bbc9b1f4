package itest

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// Drop runs `tributary drop` with args (stdin not a terminal) and
// returns its exit code and output.
func (e *Env) Drop(t *testing.T, cfg string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(Binary, append([]string{"drop", "--config", cfg}, args...)...)
	cmd.Dir = e.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("drop: %v\n%s", err, out)
	}
	return 0, string(out)
}

// PGCount counts what a catalog query finds.
func (e *Env) PGCount(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// OffsetsRecord says whether the offsets topic holds a committed record
// of the pipeline.
func (e *Env) OffsetsRecord(t *testing.T) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, found, err := kafka.ReadLastCommitted(ctx, kafka.Options{BootstrapServers: KafkaAddr, DisableTLS: true},
		e.Prefix+"."+config.OffsetsTopicSuffix, []byte(e.Name))
	if err != nil {
		t.Fatalf("read the offsets topic: %v", err)
	}
	return found
}
