package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// serverFacts is what the prerequisite check reads from the server.
type serverFacts struct {
	user     string
	walLevel string
	// version is server_version_num: snapshots need 14 or later
	// (pgoutput's messages option carries their watermarks).
	version int
	// canReplicate: superuser, the REPLICATION attribute, or (RDS and
	// Aurora, where the master user has neither) membership in
	// rds_replication or rds_superuser.
	canReplicate bool
	// onRDS: the server is Amazon RDS or Aurora (its rds_* roles or the
	// rds.logical_replication setting exist), so fixes are named in RDS
	// terms: parameter groups and grants instead of postgresql.conf and
	// ALTER ROLE.
	onRDS bool
}

func readServerFacts(ctx context.Context, conn *pgx.Conn) (serverFacts, error) {
	var f serverFacts
	if err := conn.QueryRow(ctx, `SELECT current_setting('wal_level'), current_setting('server_version_num')::int`).Scan(&f.walLevel, &f.version); err != nil {
		return f, fmt.Errorf("read wal_level: %w", err)
	}
	err := conn.QueryRow(ctx, `
SELECT r.rolname,
  r.rolsuper OR r.rolreplication OR EXISTS (
    SELECT 1 FROM pg_roles g WHERE g.rolname IN ('rds_replication', 'rds_superuser') AND pg_has_role(r.oid, g.oid, 'member')),
  EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname IN ('rds_replication', 'rds_superuser'))
    OR current_setting('rds.logical_replication', true) IS NOT NULL
FROM pg_roles r WHERE r.rolname = current_user`).Scan(&f.user, &f.canReplicate, &f.onRDS)
	if err != nil {
		return f, fmt.Errorf("read role attributes: %w", err)
	}
	return f, nil
}

// problems lists every missing prerequisite with its fix.
func (f serverFacts) problems() []string {
	var out []string
	user := pgx.Identifier{f.user}.Sanitize()
	if f.walLevel != "logical" {
		if f.onRDS {
			out = append(out, fmt.Sprintf("wal_level is %q: set rds.logical_replication = 1 in the DB parameter group "+
				"(the DB cluster parameter group on Aurora) and reboot the instance", f.walLevel))
		} else {
			out = append(out, fmt.Sprintf("wal_level is %q: set wal_level = logical and restart PostgreSQL", f.walLevel))
		}
	}
	if f.version != 0 && f.version < 140000 {
		out = append(out, fmt.Sprintf("PostgreSQL %d.%d is too old: snapshots while streaming write their watermarks with pg_logical_emit_message, which pgoutput delivers from PostgreSQL 14 on; upgrade to 14 or later",
			f.version/10000, f.version%10000/100))
	}
	if !f.canReplicate {
		if f.onRDS {
			out = append(out, fmt.Sprintf("user %s may not use logical replication: as the master user, GRANT rds_replication TO %s", f.user, user))
		} else {
			out = append(out, fmt.Sprintf("user %s lacks the REPLICATION attribute: ALTER ROLE %s WITH REPLICATION", f.user, user))
		}
	}
	return out
}

// checkPrerequisites reports every missing server setting at once.
func checkPrerequisites(ctx context.Context, conn *pgx.Conn) error {
	f, err := readServerFacts(ctx, conn)
	if err != nil {
		return err
	}
	if p := f.problems(); len(p) > 0 {
		return fmt.Errorf("postgres prerequisites:\n  %s", strings.Join(p, "\n  "))
	}
	return nil
}
