package avro_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// TestDirectConcurrent: one Recoder and one Encoder, as the Recoder's doc
// promises ("safe for concurrent use"), written to from several
// goroutines at once, each on tables of its own and on one table they
// share: every message is the one the same Recoder writes alone (run it
// with -race).
func TestDirectConcurrent(t *testing.T) {
	ctx := context.Background()
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "conc"})
	reg := &memRegistry{}
	shared := &avro.Recoder{Registry: reg, Key: true, Value: true}
	rng := rand.New(rand.NewPCG(7, 7))
	common := randomTable(rng, "common")
	var wg sync.WaitGroup
	for g := range 4 {
		rng := rand.New(rand.NewPCG(uint64(g), 1))
		own := randomTable(rng, "own"+strconv.Itoa(g))
		wg.Go(func() {
			alone := &avro.Recoder{Registry: reg, Key: true, Value: true}
			for i := range 300 {
				tbl := own
				if i%2 == 0 {
					tbl = common
				}
				ev := randomEvent(rng, tbl, postgres.SourceBlock)
				topic := enc.Topic(tbl)
				now := int64(i)
				got, gok, gerr := shared.AppendKey(ctx, nil, enc, topic, ev)
				want, wok, werr := alone.AppendKey(ctx, nil, enc, topic, ev)
				if (gerr == nil) != (werr == nil) || gok != wok || !bytes.Equal(got, want) {
					t.Errorf("goroutine %d event %d key: % x (%v), alone % x (%v)", g, i, got, gerr, want, werr)
					return
				}
				gv, _, gnull, gerr := shared.AppendValue(ctx, nil, enc, topic, ev, now)
				wv, _, wnull, werr := alone.AppendValue(ctx, nil, enc, topic, ev, now)
				if (gerr == nil) != (werr == nil) || gnull != wnull || !bytes.Equal(gv, wv) {
					t.Errorf("goroutine %d event %d value: % x (%v), alone % x (%v)", g, i, gv, gerr, wv, werr)
					return
				}
			}
		})
	}
	wg.Wait()
}
