package itest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// Stream commits writer transactions until ctx ends, about a hundred a
// second, on one connection (the source is not faulted here).
func (w *Writer) Stream(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	for ctx.Err() == nil {
		if err := w.Tx(PGExec(ctx, conn), rng); err != nil && ctx.Err() == nil {
			return fmt.Errorf("writer: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
