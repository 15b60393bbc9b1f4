package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Checker = (*Source)(nil)

// Check implements source.Checker: the connection and sign-in, then the
// prerequisites run checks at start (checkPrerequisites, one line each),
// the publication, the captured tables' replica identity and the
// replication slot.
func (s *Source) Check(ctx context.Context) []source.Check {
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return []source.Check{connectionFailed(s, err)}
	}
	defer conn.Close(context.WithoutCancel(ctx))
	checks := []source.Check{{Name: "source connection", OK: true,
		Detail: fmt.Sprintf("signed in to PostgreSQL at %s:%d as %s", s.connCfg.Host, s.connCfg.Port, s.connCfg.User)},
		source.TLSState(conn.PgConn().Conn(), &s.opts.Config, s.connCfg.TLSConfig)}

	var problems string
	if err := checkPrerequisites(ctx, conn); err != nil {
		problems = err.Error()
	}
	checks = append(checks,
		prerequisite("wal_level", problems, "wal_level is logical", "wal_level"),
		prerequisite("replication grant", problems, "the user may replicate",
			"REPLICATION attribute", "may not use logical replication"))

	checks = append(checks, s.publicationCheck(ctx, conn))

	checks = append(checks, s.identityCheck(ctx, conn), s.readCheck(ctx, conn))

	var slotExists, active bool
	var free int
	var elsewhere slotState
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1),
		EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active),
		current_setting('max_replication_slots')::int - (SELECT count(*) FROM pg_replication_slots)`, s.slot).Scan(&slotExists, &active, &free)
	if err == nil && slotExists {
		elsewhere, err = lookupSlot(ctx, conn, s.slot)
	}
	switch {
	case err != nil:
		checks = append(checks, source.Check{Name: "replication slot", Detail: "cannot read pg_replication_slots: " + err.Error()})
	case elsewhere.elsewhere != "":
		checks = append(checks, source.Check{Name: "replication slot", Detail: "slot " + s.slot + " is " + elsewhere.elsewhere + ", not of this one (slot names are server-wide): another pipeline's, which run refuses",
			Fix: "give this pipeline another source.slot"})
	case slotExists && active:
		checks = append(checks, source.Check{Name: "replication slot", OK: true, Detail: "slot " + s.slot + " exists and is in use (by a running pipeline, or a stale connection run ends)"})
	case slotExists:
		checks = append(checks, source.Check{Name: "replication slot", OK: true, Detail: "slot " + s.slot + " exists; run resumes from it"})
	case free > 0:
		checks = append(checks, source.Check{Name: "replication slot", OK: true, Detail: fmt.Sprintf("slot %s does not exist yet; run creates it (%d of max_replication_slots free)", s.slot, free)})
	default:
		checks = append(checks, source.Check{Name: "replication slot", Detail: "slot " + s.slot + " does not exist and max_replication_slots is used up",
			Fix: "drop an unused slot (SELECT pg_drop_replication_slot(...)) or raise max_replication_slots and restart PostgreSQL"})
	}
	return checks
}

// prerequisite makes one line of checkPrerequisites' report: failed, with
// its own words, when a problem mentions one of markers (the self-managed
// and the RDS wording of the same problem).
func prerequisite(name, problems, okDetail string, markers ...string) source.Check {
	for _, line := range strings.Split(problems, "\n") {
		if slices.ContainsFunc(markers, func(m string) bool { return strings.Contains(line, m) }) {
			detail, fix, _ := strings.Cut(strings.TrimSpace(line), ": ")
			return source.Check{Name: name, Detail: detail, Fix: fix}
		}
	}
	if problems != "" && !strings.HasPrefix(problems, "postgres prerequisites:") {
		return source.Check{Name: name, Detail: problems} // the check itself could not run
	}
	return source.Check{Name: name, OK: true, Detail: okDetail}
}

var _ source.Describer = (*Source)(nil)

// Describe implements source.Describer: the tables run would capture
// (source.tables, or every table with a primary key), as the catalog
// describes them now.
func (s *Source) Describe(ctx context.Context) ([]*change.Table, error) {
	conn, err := pgx.ConnectConfig(ctx, s.connCfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rels, _, err := selectedTables(ctx, conn, s.sel)
	if err != nil {
		return nil, err
	}
	tables := make([]*change.Table, len(rels))
	for i, r := range rels {
		tables[i] = r.table(s.connCfg.Database, nil, s.sel)
	}
	return tables, nil
}

func connectionFailed(s *Source, err error) source.Check {
	c := source.Check{Name: "source connection",
		Detail: fmt.Sprintf("cannot connect to PostgreSQL at %s:%d as %s: %v", s.connCfg.Host, s.connCfg.Port, s.connCfg.User, err),
		Fix:    "check source.url (host, port, database), that the network allows the connection, and pg_hba.conf"}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000") {
		c.Fix = "check the user name and password in source.url, and that pg_hba.conf lets the user in from here"
	}
	return c
}
