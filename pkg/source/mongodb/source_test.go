package mongodb

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// A resume point gone from the oplog is "resnapshot required" to the
// loop (which backfills again under snapshot_mode when_needed), and never
// retried; other errors keep their identity.
func TestLostHistoryIsResnapshotRequired(t *testing.T) {
	s := &Source{d: &Driver{}}
	err := s.lost(fmt.Errorf("%w (opening the change stream: ChangeStreamHistoryLost)", ErrHistoryLost))
	if !errors.Is(err, source.ErrResnapshotRequired) || !errors.Is(err, ErrHistoryLost) {
		t.Fatalf("lost history: %v", err)
	}
	if s.Retriable(err) {
		t.Fatal("lost history retried")
	}
	other := errors.New("boom")
	if got := s.lost(other); got != other {
		t.Fatalf("other error: %v", got)
	}
}

// The checkpoint's cursor is read back as written; a damaged one is an
// error naming the checkpoint, not a fresh start.
func TestResumeReadsTheCursor(t *testing.T) {
	s := &Source{d: &Driver{}, found: []string{"shop.orders", "shop.carts"}}
	added, err := s.Resume(t.Context(), source.Checkpoint{Cursor: []byte(`{"resume_token":{"_data":"8263"},"operation_time":{"t":5,"i":1}}`),
		Captured: []byte(`["shop.orders"]`)}, nil)
	if err != nil || len(added) != 1 || added[0] != "shop.carts" {
		t.Fatalf("added %v, %v", added, err)
	}
	if s.d.cursor.Token == nil || s.d.cursor.OperationTime.T != 5 {
		t.Fatalf("cursor %+v", s.d.cursor)
	}
	if _, err := s.Resume(t.Context(), source.Checkpoint{Cursor: []byte(`{"resume_token":7}`)}, nil); err == nil {
		t.Fatal("a damaged cursor resumed")
	}
}
