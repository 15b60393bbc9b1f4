package checkpoint

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestKindsRegistered: both stores are reachable by their checkpoint.store
// names, and an unknown name is refused naming the field.
func TestKindsRegistered(t *testing.T) {
	if got := Kinds(); !slices.Equal(got, []string{"dynamodb", "file"}) {
		t.Fatalf("kinds %v", got)
	}
	if k, _ := Lookup("dynamodb"); !k.Leased {
		t.Error("dynamodb is not leased")
	}
	if k, _ := Lookup("file"); k.Leased {
		t.Error("file is leased")
	}
	if _, err := Lookup("etcd"); err == nil || !strings.Contains(err.Error(), "checkpoint.store") {
		t.Errorf("Lookup(etcd): %v", err)
	}
}

// TestKindEveryUse runs, for each kind, what the CLI does with a store:
// run opens it and saves a checkpoint and a status snapshot; status reads
// both while run holds it; backfill queues a request status sees; drop is
// refused while run holds the pipeline, then lists and removes it all.
func TestKindEveryUse(t *testing.T) {
	for _, name := range []string{"file", "dynamodb"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := Where{Pipeline: "shop", Path: t.TempDir(), LeaseDuration: 3 * time.Second, CreateTable: true}
			if name == "dynamodb" {
				dynamoClient(t, awstest.Moto) // drop needs transactions: moto's
				w.Table = testTable()
			}
			k, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if _, found, st, err := k.Read(ctx, w); err != nil || found || st != nil {
				t.Fatalf("Read before the first run: found %v, status %q, %v", found, st, err)
			}
			s, err := k.Open(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, Checkpoint{Pipeline: "shop", Position: []byte(`{"n":1}`)}); err != nil {
				t.Fatal(err)
			}
			if err := s.SaveStatus(ctx, []byte(`{"version":"v1"}`)); err != nil {
				t.Fatal(err)
			}
			cp, found, st, err := k.Read(ctx, w)
			if err != nil || !found || string(cp.Position) != `{"n":1}` || string(st) != `{"version":"v1"}` {
				t.Fatalf("Read while open: %+v found %v status %q, %v", cp, found, st, err)
			}
			if err := k.RequestBackfill(ctx, w, Request{Tables: []string{"public.orders"}}); err != nil {
				t.Fatal(err)
			}
			if r, err := k.PendingBackfill(ctx, w); err != nil || !slices.Equal(r.Tables, []string{"public.orders"}) {
				t.Fatalf("PendingBackfill: %+v, %v", r, err)
			}
			if _, err := k.Hold(ctx, w); !errors.Is(err, ErrOwned) {
				t.Fatalf("Hold while open: %v, want ErrOwned", err)
			}
			s.Close()
			h, err := k.Hold(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Contents) == 0 {
				t.Fatal("Hold lists nothing of a pipeline that ran")
			}
			if err := h.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			if _, found, st, err := k.Read(ctx, w); err != nil || found || st != nil {
				t.Fatalf("Read after Drop: found %v, status %q, %v", found, st, err)
			}
		})
	}
}
