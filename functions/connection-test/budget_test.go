package main

import (
	"context"
	"testing"
	"time"
)

// TestTestBudgetFollowsTheDeadline: the Kafka checks get what is left of
// the invocation, not a fixed 20 s that slow SSM reads could push past API
// Gateway's 30 s (the caller then saw a bare 503 and no report).
func TestTestBudgetFollowsTheDeadline(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		left   time.Duration
		want   time.Duration
		wantOK bool
	}{
		{28 * time.Second, testTimeout, true},                    // a fresh invocation
		{10 * time.Second, 10*time.Second - answerReserve, true}, // the reads took 18 s
		{3 * time.Second, 0, false},                              // not worth starting
	} {
		ctx, cancel := context.WithDeadline(context.Background(), now.Add(c.left))
		got, ok := testBudget(ctx, now)
		cancel()
		if ok != c.wantOK || (ok && got != c.want) {
			t.Errorf("%v left: budget %v ok %v, want %v ok %v", c.left, got, ok, c.want, c.wantOK)
		}
	}
	if got, ok := testBudget(context.Background(), now); !ok || got != testTimeout {
		t.Errorf("no deadline: %v %v, want %v", got, ok, testTimeout)
	}
}
