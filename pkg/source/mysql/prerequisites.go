package mysql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// server is what the prerequisites check learned about the server.
type server struct {
	id   int64 // @@server_id
	gtid bool  // GTIDs are on (MySQL gtid_mode=ON; always for MariaDB)
	// fullMetadata: binlog_row_metadata = FULL, table map events carry
	// column names (MySQL ≥ 8.0.1, MariaDB ≥ 10.5).
	fullMetadata bool
}

// checkPrerequisites reads the binlog settings CDC needs and reports every
// problem at once, each naming the setting and the fix.
func checkPrerequisites(conn *client.Conn, flavor string) (server, error) {
	var srv server
	q := "SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image, @@GLOBAL.server_id"
	if flavor == flavorMySQL {
		q += ", @@GLOBAL.gtid_mode"
	} else {
		q += ", 'ON'"
	}
	r, err := conn.Execute(q)
	if err != nil {
		return srv, fmt.Errorf("read binlog settings: %w", err)
	}
	get := func(i int) string { v, _ := r.GetString(0, i); return strings.ToUpper(strings.Clone(v)) }
	logBin, format, image, gtidMode := get(0), get(1), get(2), get(4)
	srv.id, _ = r.GetInt(0, 3)
	srv.gtid = gtidMode == "ON"

	if r, err := conn.Execute("SELECT @@GLOBAL.binlog_row_metadata"); err == nil {
		v, _ := r.GetString(0, 0)
		srv.fullMetadata = strings.EqualFold(v, "FULL")
	} // older servers have no such setting: MINIMAL

	st := binlogSettings{logBin: logBin, format: format, image: image, serverID: srv.id}
	st.rds, st.retentionHours = rdsRetention(conn)
	return srv, st.problems()
}

// binlogSettings is what the prerequisites check read from the server.
type binlogSettings struct {
	logBin, format, image string
	serverID              int64
	// rds: the server is Amazon RDS / Aurora MySQL (it has
	// mysql.rds_configuration); retentionHours is its 'binlog retention
	// hours', -1 when unset (RDS then purges binlog as soon as it can).
	rds            bool
	retentionHours int
}

// minRetentionHours is the binlog retention below which a restart after
// an ordinary outage (a weekend, a failed deploy) would find its position
// purged.
const minRetentionHours = 24

// problems lists every unmet prerequisite, each naming the setting and
// where to change it: the server configuration, or on RDS the DB
// parameter group and mysql.rds_set_configuration.
func (b binlogSettings) problems() error {
	var problems []error
	where := func(setting, value string) string {
		if b.rds {
			return fmt.Sprintf("set %s = %s in the DB parameter group (DB cluster parameter group on Aurora) of the instance; RDS does not allow SET GLOBAL", setting, value)
		}
		return fmt.Sprintf("SET GLOBAL %s = '%s' and set %s = %s in the server configuration", setting, value, setting, value)
	}
	if b.logBin != "1" && b.logBin != "ON" {
		fix := "enable the binary log (log_bin = ON / log-bin = <basename> in the server configuration) and restart the server"
		if b.rds {
			fix = "on RDS the binary log is on when automated backups are (backup retention period of 1 day or more); on Aurora MySQL set binlog_format = ROW in the DB cluster parameter group and reboot the writer"
		}
		problems = append(problems, fmt.Errorf("%w: log_bin is OFF: %s", ErrPrerequisite, fix))
	}
	if b.format != "ROW" {
		problems = append(problems, fmt.Errorf("%w: binlog_format is %s, must be ROW: %s", ErrPrerequisite, b.format, where("binlog_format", "ROW")))
	}
	if b.image != "FULL" {
		problems = append(problems, fmt.Errorf("%w: binlog_row_image is %s, must be FULL: %s", ErrPrerequisite, b.image, where("binlog_row_image", "FULL")))
	}
	if b.serverID == 0 {
		problems = append(problems, fmt.Errorf("%w: server_id is 0: set server_id to a non-zero value in the server configuration", ErrPrerequisite))
	}
	if b.rds && b.retentionHours != unknownRetention && b.retentionHours < minRetentionHours {
		have := "unset (RDS purges binlog as soon as no replica needs it)"
		if b.retentionHours >= 0 {
			have = fmt.Sprintf("%d hours", b.retentionHours)
		}
		problems = append(problems, fmt.Errorf("%w: binlog retention hours is %s, too short for the pipeline to resume after a stop: CALL mysql.rds_set_configuration('binlog retention hours', 72) (at least %d; up to 168)",
			ErrPrerequisite, have, minRetentionHours))
	}
	return errors.Join(problems...)
}

// rdsRetention tells whether the server is RDS / Aurora MySQL (its
// basedir is under /rdsdbbin/, or it has mysql.rds_configuration) and
// reads its 'binlog retention hours': -1 when unset, unknownRetention
// when the user may not read it.
func rdsRetention(conn *client.Conn) (rds bool, hours int) {
	if r, err := conn.Execute("SELECT @@GLOBAL.basedir"); err == nil {
		v, _ := r.GetString(0, 0)
		rds = strings.Contains(v, "rdsdbbin")
	}
	r, err := conn.Execute("SELECT value FROM mysql.rds_configuration WHERE name = 'binlog retention hours'")
	if err != nil {
		return rds, unknownRetention // not RDS (no such table), or not readable
	}
	if len(r.Values) == 0 || r.Values[0][0].Type == gomysql.FieldValueTypeNull {
		return true, -1
	}
	v, _ := r.GetString(0, 0)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return true, unknownRetention
	}
	return true, n
}

// unknownRetention: the retention could not be read; nothing is reported.
const unknownRetention = -2

// checkRetained fails with source.ErrResnapshotRequired when the checkpoint's
// binlog file is gone (purged or expired), or, with GTIDs, when the server
// lacks transactions the checkpoint has read (checkHasGTIDs) or, on
// MySQL, purged transactions it has not (checkPurged).
func checkRetained(conn *client.Conn, flavor string, pos position) error {
	if pos.GTID != "" {
		// Streaming resumes by GTID (stream), not by the file, whose name
		// means nothing on another server (a new primary after failover).
		if err := checkHasGTIDs(conn, flavor, pos); err != nil {
			return err
		}
		return checkPurged(conn, flavor, pos)
	}
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return fmt.Errorf("list binary logs (needs the REPLICATION CLIENT / BINLOG MONITOR privilege): %w", err)
	}
	found := false
	for i := range r.Values {
		if name, _ := r.GetString(i, 0); name == pos.File {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("binlog file %s of the checkpoint is no longer on the server (purged or expired): %w", pos.File, source.ErrResnapshotRequired)
	}
	return nil
}

// checkPurged fails with source.ErrResnapshotRequired when the server purged
// transactions the checkpoint has not read: on MySQL some of gtid_purged,
// on MariaDB a GTID state before its oldest binlog file (checkPurgedMariaDB).
func checkPurged(conn *client.Conn, flavor string, pos position) error {
	if flavor == flavorMariaDB {
		return checkPurgedMariaDB(conn, pos)
	}
	if flavor == flavorMySQL {
		r, err := conn.Execute("SELECT @@GLOBAL.gtid_purged")
		if err != nil {
			return fmt.Errorf("read gtid_purged: %w", err)
		}
		purged, _ := r.GetString(0, 0)
		if strings.TrimSpace(purged) != "" {
			have, err1 := parseGTIDSet(flavor, pos.GTID)
			gone, err2 := parseGTIDSet(flavor, purged)
			if err1 == nil && err2 == nil && !have.Contain(gone) {
				return fmt.Errorf("the server purged transactions (gtid_purged %s) the checkpoint %s has not read: %w", purged, pos.GTID, source.ErrResnapshotRequired)
			}
		}
	}
	return nil
}
