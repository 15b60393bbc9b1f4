package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// Without an include list, tables an extension owns (PostGIS's
// spatial_ref_sys, thousands of rows) are not captured; listed, they are.
func TestListTablesLeavesOutExtensionTables(t *testing.T) {
	conn, _ := testDB(t, "")
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE EXTENSION postgis`); err != nil {
		t.Skipf("PostGIS is not installed (integration/services/postgres.sh installs it): %v", err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE app (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	rels, _, err := listTables(ctx, conn, selection(t, config.Source{}))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rels); !slices.Equal(got, []string{"public.app"}) {
		t.Errorf("default selection: %v, want only public.app", got)
	}
	rels, missing, err := listTables(ctx, conn, selection(t, config.Source{Tables: []string{"public.spatial_ref_sys"}}))
	if err != nil || len(missing) != 0 || len(rels) != 1 {
		t.Errorf("listed extension table: %v missing %v err %v", names(rels), missing, err)
	}
}
