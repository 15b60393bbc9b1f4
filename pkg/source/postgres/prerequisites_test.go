package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPrerequisitesRDSRoles mirrors RDS / Aurora, where the master user is
// neither superuser nor has the REPLICATION attribute: replication comes
// from membership in rds_replication. A role created here stands in for
// RDS's (a real replication connection would still need REPLICATION on a
// plain server, so the check itself is what is tested).
func TestPrerequisitesRDSRoles(t *testing.T) {
	_, url := testDB(t, "")
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, testAdminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// rds_replication is cluster-wide: create it when missing, and drop it
	// afterwards only if this test created it.
	var had bool
	admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rds_replication')`).Scan(&had)
	if !had {
		if _, err := admin.Exec(ctx, `CREATE ROLE rds_replication NOLOGIN`); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	id := fmt.Sprintf("%d_%04d", os.Getpid()%100000, rand.IntN(10000))
	member, outsider := "rds_member_"+id, "rds_outsider_"+id
	for _, u := range []string{member, outsider} {
		exec(`CREATE ROLE ` + u + ` LOGIN PASSWORD 'pw' NOSUPERUSER NOREPLICATION`)
	}
	exec(`GRANT rds_replication TO ` + member)
	t.Cleanup(func() {
		for _, u := range []string{member, outsider} {
			admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+u)
		}
		if !had {
			admin.Exec(context.Background(), `DROP ROLE IF EXISTS rds_replication`)
		}
	})
	as := func(user string) *pgx.Conn {
		t.Helper()
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.User, cfg.Password = user, "pw"
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}

	if err := checkPrerequisites(ctx, as(member)); err != nil {
		t.Errorf("a member of rds_replication is refused: %v", err)
	}
	err = checkPrerequisites(ctx, as(outsider))
	if want := `GRANT rds_replication TO "` + outsider + `"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a user outside rds_replication on an RDS-shaped server: got %v, want an error saying %q", err, want)
	}
}

// TestPrerequisiteMessages: each failure names its fix, in RDS terms on
// RDS and Aurora, and every problem is reported at once.
func TestPrerequisiteMessages(t *testing.T) {
	for _, c := range []struct {
		name  string
		facts serverFacts
		want  []string
	}{
		{"fine", serverFacts{user: "u", walLevel: "logical", canReplicate: true}, nil},
		{"self-managed", serverFacts{user: "app user", walLevel: "replica"}, []string{
			`wal_level is "replica": set wal_level = logical and restart PostgreSQL`,
			`user app user lacks the REPLICATION attribute: ALTER ROLE "app user" WITH REPLICATION`,
		}},
		{"rds", serverFacts{user: "tributary", walLevel: "replica", onRDS: true}, []string{
			`wal_level is "replica": set rds.logical_replication = 1 in the DB parameter group (the DB cluster parameter group on Aurora) and reboot the instance`,
			`user tributary may not use logical replication: as the master user, GRANT rds_replication TO "tributary"`,
		}},
		{"rds member", serverFacts{user: "tributary", walLevel: "logical", canReplicate: true, onRDS: true}, nil},
	} {
		got := c.facts.problems()
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
