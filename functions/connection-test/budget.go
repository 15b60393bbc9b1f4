package main

import (
	"context"
	"time"
)

const (
	// answerReserve is kept back from the invocation's deadline to write
	// the answer: a function killed at its deadline answers nothing, and
	// API Gateway shows the caller a bare 503.
	answerReserve = 1500 * time.Millisecond
	// minTestBudget is the least time worth starting the Kafka checks with.
	minTestBudget = 2 * time.Second
)

// testBudget is how long the Kafka checks may take: testTimeout, or what
// is left of the invocation (its deadline, which the Lambda timeout sets
// under API Gateway's 30 s) after the configuration was read, less
// answerReserve; ok is false when too little is left to start.
func testBudget(ctx context.Context, now time.Time) (budget time.Duration, ok bool) {
	budget = testTimeout
	if deadline, has := ctx.Deadline(); has {
		if left := deadline.Sub(now) - answerReserve; left < budget {
			budget = left
		}
	}
	return budget, budget >= minTestBudget
}
