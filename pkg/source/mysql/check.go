package mysql

import (
	"context"
	"fmt"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Checker = (*Source)(nil)

// Check implements source.Checker: the connection and sign-in, each binlog
// setting run checks at start (checkPrerequisites, one line each), GTIDs,
// and the replication grants.
func (s *Source) Check(ctx context.Context) []source.Check {
	conn, err := s.connect(ctx)
	if err != nil {
		return []source.Check{{Name: "source connection", Detail: err.Error(),
			Fix: "check source.url (host, port, user, password) and that the network allows the connection"}}
	}
	defer conn.Close()
	flavor, err := detectFlavor(conn)
	if err != nil {
		return []source.Check{{Name: "source connection", Detail: err.Error()}}
	}
	checks := []source.Check{{Name: "source connection", OK: true, Detail: fmt.Sprintf("signed in to %s at %s as %s", flavor, s.conn.Addr(), s.conn.User)}}
	// go-mysql swaps its packet connection's net.Conn for a *tls.Conn
	// after the TLS handshake, so the state read there is the live one.
	tlsCfg, _ := s.tlsConfig()
	checks = append(checks, source.TLSState(conn.Conn.Conn, &s.opts.Config, tlsCfg))

	srv, perr := checkPrerequisites(conn, flavor)
	var problems string
	if perr != nil {
		problems = perr.Error()
	}
	for _, setting := range []struct{ name, ok string }{
		{"log_bin", "the binary log is on"},
		{"binlog_format", "binlog_format is ROW"},
		{"binlog_row_image", "binlog_row_image is FULL"},
		{"server_id", "server_id is set"},
	} {
		checks = append(checks, binlogSetting(setting.name, setting.ok, problems))
	}
	if srv.gtid {
		checks = append(checks, source.Check{Name: "gtid", OK: true, Detail: "GTIDs are on: positions survive a failover"})
	} else {
		checks = append(checks, source.Check{Name: "gtid", OK: true, Detail: "gtid_mode is not ON: positions are binlog file and offset, which do not survive a failover",
			Fix: "optional: SET GLOBAL gtid_mode = ON (in steps) and enforce_gtid_consistency = ON"})
	}
	checks = append(checks, grants(conn))
	s.flavor = flavor
	captured := source.Check{Name: "captured tables", OK: true}
	if tables, err := s.selectTables(conn); err != nil {
		detail, fix, _ := strings.Cut(strings.TrimPrefix(err.Error(), ErrPrerequisite.Error()+": "), "; ")
		captured.OK, captured.Detail, captured.Fix = false, detail, fix
	} else {
		captured.Detail = fmt.Sprintf("%d tables: %s", len(tables), tableList(tables))
	}
	checks = append(checks, captured)
	sig := source.Check{Name: "signal table", OK: true}
	db, name := s.signalTable()
	sig.Detail = fmt.Sprintf("snapshots can write their watermarks to %s.%s", db, name)
	if err := s.ensureSignalTable(conn); err != nil {
		detail, fix, _ := strings.Cut(strings.TrimPrefix(err.Error(), ErrPrerequisite.Error()+": "), "; ")
		sig = source.Check{Name: "signal table", Detail: detail, Fix: fix}
	}
	return append(checks, sig)
}

// tableList names tables, the first ten of them.
func tableList(tables []*table) string {
	var names []string
	for i, t := range tables {
		if i == 10 {
			names = append(names, fmt.Sprintf("and %d more", len(tables)-10))
			break
		}
		names = append(names, t.id())
	}
	return strings.Join(names, ", ")
}

var _ source.Describer = (*Source)(nil)

// Describe implements source.Describer: the tables run would capture
// (source.tables, or every table with a primary key in the URL's
// database), as information_schema describes them now.
func (s *Source) Describe(ctx context.Context) ([]*change.Table, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if s.flavor, err = detectFlavor(conn); err != nil {
		return nil, err
	}
	tables, err := s.selectTables(conn)
	if err != nil {
		return nil, err
	}
	out := make([]*change.Table, len(tables))
	for i, t := range tables {
		out[i] = s.published(t).table(t.t)
	}
	return out, nil
}

// binlogSetting makes one line of checkPrerequisites' report: failed, in
// its words, when a problem names the setting.
func binlogSetting(name, okDetail, problems string) source.Check {
	for _, line := range strings.Split(problems, "\n") {
		line = strings.TrimPrefix(line, ErrPrerequisite.Error()+": ")
		if strings.HasPrefix(line, name+" is") {
			detail, fix, _ := strings.Cut(line, ": ")
			return source.Check{Name: name, Detail: detail, Fix: fix}
		}
	}
	if problems != "" && !strings.Contains(problems, ErrPrerequisite.Error()) {
		return source.Check{Name: name, Detail: problems} // the settings could not be read
	}
	return source.Check{Name: name, OK: true, Detail: okDetail}
}

// grants checks that the user may read the binlog: REPLICATION SLAVE (or
// REPLICA) to stream, REPLICATION CLIENT (MariaDB: BINLOG MONITOR) to list
// the binary logs, or ALL PRIVILEGES.
func grants(conn interface {
	Execute(string, ...any) (*gomysql.Result, error)
}) source.Check {
	c := source.Check{Name: "replication grants"}
	r, err := conn.Execute("SHOW GRANTS FOR CURRENT_USER()")
	if err != nil {
		c.Detail = "cannot read the grants: " + err.Error()
		return c
	}
	var all []string
	for i := range r.Values {
		g, _ := r.GetString(i, 0)
		all = append(all, strings.ToUpper(g))
	}
	text := strings.Join(all, "\n")
	has := func(privs ...string) bool {
		for _, p := range privs {
			if strings.Contains(text, p) {
				return true
			}
		}
		return false
	}
	if has("ALL PRIVILEGES ON *.*") {
		c.OK, c.Detail = true, "the user has ALL PRIVILEGES"
		return c
	}
	var missing []string
	if !has("REPLICATION SLAVE", "REPLICATION REPLICA") {
		missing = append(missing, "REPLICATION SLAVE")
	}
	if !has("REPLICATION CLIENT", "BINLOG MONITOR") {
		missing = append(missing, "REPLICATION CLIENT (MariaDB: BINLOG MONITOR)")
	}
	if len(missing) == 0 {
		c.OK, c.Detail = true, "the user may read the binlog"
		return c
	}
	c.Detail = "the user lacks " + strings.Join(missing, " and ")
	c.Fix = "GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO <user> (MariaDB: BINLOG MONITOR instead of REPLICATION CLIENT)"
	return c
}
