package main

import (
	"os/exec"
	"testing"
)

// TestRunPeakIsTheChilds: the peak RSS of a child the benchmark runs is the child's own,
// not the harness's: a harness holding 300 MB runs `sleep`, whose peak is a few MB.
func TestRunPeakIsTheChilds(t *testing.T) {
	held := make([]byte, 300<<20)
	for i := range held {
		held[i] = byte(i)
	}
	out, peak, err := runPeak(exec.Command("sleep", "0.3"))
	if err != nil {
		t.Fatalf("sleep: %v\n%s", err, out)
	}
	if peak <= 0 || peak > 50 {
		t.Errorf("peak RSS of sleep = %.0f MB, want a few (the harness holds %d MB)", peak, len(held)>>20)
	}
	_ = held[len(held)-1]
}
