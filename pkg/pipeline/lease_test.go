package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// TestLeaseExpiredWhileLingeringPublishesNothing: records handed to the
// producer while the task owned the pipeline, still lingering in the
// producer when its lease ran out (a task frozen by SIGSTOP just after it
// produced them, thawed after a takeover), are never written. Nothing has
// noticed the expiry yet when the linger ends (the heartbeat notices it a
// while later), so only a producer that looks at the lease before it
// writes holds them back; the clean-clone CI saw them appended after the
// new owner's records (TestLeaseTakeover/postgres).
func TestLeaseExpiredWhileLingeringPublishesNothing(t *testing.T) {
	h := newRetryHarness(t)
	const linger = 300 * time.Millisecond
	p := h.pipeline(t, kgo.ProducerLinger(linger))
	store := &expiringStore{Store: h.store, lost: make(chan struct{})}
	p.Store = store
	// The lease runs out a third into the linger: the producer had time to
	// look up the topic and get its producer id while it was owned.
	p.Source = &freezingSource{events: h.source.events, store: store, ownedFor: linger / 3, noticeAfter: 3 * linger}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := p.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run did not stop on the lost lease: %v", err)
	}
	if !errors.Is(err, checkpoint.ErrLeaseLost) {
		t.Fatalf("Run: %v, want the lost lease", err)
	}

	adm := kadm.NewClient(kgoClient(t, h))
	ends, err := adm.ListEndOffsets(context.Background(), retryTopic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	if n != 0 {
		t.Errorf("%d records written after the lease ran out (handed over before, lingering until after)", n)
	}
}

func kgoClient(t *testing.T, h *retryHarness) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// expiringStore is a lease whose entitlement runs out when expired is set,
// and which, like the DynamoDB lease, marks itself lost only once somebody
// asks (Owned) after that.
type expiringStore struct {
	checkpoint.Store
	expired atomic.Bool
	once    sync.Once
	lost    chan struct{}
}

func (s *expiringStore) Owned() error {
	if !s.expired.Load() {
		return nil
	}
	s.once.Do(func() { close(s.lost) })
	return fmt.Errorf("%w: not renewed within the lease", checkpoint.ErrLeaseLost)
}

func (s *expiringStore) Lost() <-chan struct{} { return s.lost }

func (s *expiringStore) Save(ctx context.Context, cp checkpoint.Checkpoint) error {
	if err := s.Owned(); err != nil {
		return err
	}
	return s.Store.Save(ctx, cp)
}

// freezingSource emits its events (the task owns the pipeline), then
// after ownedFor lets the lease run out, as a freeze past the lease does,
// and noticeAfter later asks the store, as the heartbeat does on its next
// tick.
type freezingSource struct {
	events                []*change.Event
	store                 *expiringStore
	ownedFor, noticeAfter time.Duration
}

func (s *freezingSource) Run(ctx context.Context, _ change.Position, emit func(context.Context, *change.Event) error) error {
	for _, ev := range s.events {
		if err := emit(ctx, ev); err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.ownedFor):
	}
	s.store.expired.Store(true)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.noticeAfter):
	}
	s.store.Owned()
	<-ctx.Done()
	return ctx.Err()
}

func (s *freezingSource) Ack(change.Position) {}
func (s *freezingSource) Close() error        { return nil }
