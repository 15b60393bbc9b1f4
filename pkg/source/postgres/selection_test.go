package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
)

func selection(t *testing.T, s config.Source) *config.Selection {
	t.Helper()
	sel, err := s.Selection()
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// listTables selects by Debezium-style regular expressions (anchored,
// case-insensitive, any table they match, keyless ones too), by plain
// names (exactly), and leaves out what source.exclude_tables matches;
// missing names only the plain names that match nothing.
func TestListTablesSelection(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	for _, q := range []string{
		`CREATE SCHEMA shop`,
		`CREATE TABLE shop.order_lines (id int PRIMARY KEY)`,
		`CREATE TABLE shop.order_notes (v text)`, `ALTER TABLE shop.order_notes REPLICA IDENTITY FULL`,
		`CREATE TABLE shop.order_archive (id int PRIMARY KEY)`,
		`CREATE TABLE shop.customers (id int PRIMARY KEY)`,
		`CREATE TABLE public.orders (id int PRIMARY KEY)`,
		`CREATE TABLE public.audit_log (id int PRIMARY KEY)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct {
		name          string
		src           config.Source
		want, missing []string
	}{
		{"patterns and names", config.Source{
			Tables:        []string{`SHOP\.order_.*`, "public.orders", "public.prodcuts"},
			ExcludeTables: []string{`shop\.order_archive`},
		}, []string{"public.orders", "shop.order_lines", "shop.order_notes"}, []string{"public.prodcuts"}},
		{"anchored", config.Source{Tables: []string{`order_.*`, `hop\.customers`}}, nil, nil},
		{"default minus exclusions", config.Source{ExcludeTables: []string{`public\.audit_.*`, `shop\..*`}},
			[]string{"public.orders"}, nil},
	} {
		rels, missing, err := listTables(ctx, conn, selection(t, c.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := names(rels); !slices.Equal(got, c.want) {
			t.Errorf("%s: tables %q, want %q", c.name, got, c.want)
		}
		if !slices.Equal(missing, c.missing) {
			t.Errorf("%s: missing %q, want %q", c.name, missing, c.missing)
		}
	}
}
