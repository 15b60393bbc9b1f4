package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// readCheck is test-connection's "table privileges" line: the backfill
// reads every captured table with SELECT, and without it run fails at its
// first chunk, after it has made the slot. A grant on the table, or on
// every one of its columns, will do.
func (s *Source) readCheck(ctx context.Context, conn *pgx.Conn) source.Check {
	c := source.Check{Name: "table privileges"}
	captured, _, err := s.checkedTables(ctx, conn)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	var unreadable []string
	for _, r := range captured {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT has_table_privilege($1::oid, 'SELECT') OR NOT EXISTS (
			SELECT 1 FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped
			AND NOT has_column_privilege($1::oid, attnum, 'SELECT'))`, r.oid).Scan(&ok); err != nil {
			c.Detail = fmt.Sprintf("cannot read the privileges on %s: %v", r.fullName(), err)
			return c
		}
		if !ok {
			unreadable = append(unreadable, pgx.Identifier{r.schema, r.name}.Sanitize())
		}
	}
	if len(unreadable) == 0 {
		c.OK, c.Detail = true, fmt.Sprintf("the user may read (SELECT) every captured table (%d)", len(captured))
		return c
	}
	c.Detail = fmt.Sprintf("user %s may not read (SELECT) %s", s.connCfg.User, strings.Join(unreadable, ", "))
	if !s.opts.Config.BackfillEnabled() {
		// Streaming reads no table; a backfill asked for later does.
		c.OK, c.Detail = true, c.Detail+": no backfill runs (source.snapshot_mode no_data), but `tributary backfill` would fail"
		return c
	}
	c.Detail += ": the backfill reads them, and run would fail at its first chunk"
	c.Fix = fmt.Sprintf("as the tables' owner: GRANT SELECT ON %s TO %s", strings.Join(unreadable, ", "), pgx.Identifier{s.connCfg.User}.Sanitize())
	return c
}
