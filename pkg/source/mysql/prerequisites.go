package mysql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
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

	var problems []error
	if logBin != "1" && logBin != "ON" {
		problems = append(problems, fmt.Errorf("%w: log_bin is OFF: enable the binary log (log_bin = ON / log-bin = <basename> in the server configuration) and restart the server", ErrPrerequisite))
	}
	if format != "ROW" {
		problems = append(problems, fmt.Errorf("%w: binlog_format is %s, must be ROW: SET GLOBAL binlog_format = 'ROW' and set binlog_format = ROW in the server configuration", ErrPrerequisite, format))
	}
	if image != "FULL" {
		problems = append(problems, fmt.Errorf("%w: binlog_row_image is %s, must be FULL: SET GLOBAL binlog_row_image = 'FULL' and set binlog_row_image = FULL in the server configuration", ErrPrerequisite, image))
	}
	if srv.id == 0 {
		problems = append(problems, fmt.Errorf("%w: server_id is 0: set server_id to a non-zero value in the server configuration", ErrPrerequisite))
	}
	return srv, errors.Join(problems...)
}

// checkRetained fails with ErrResnapshotRequired when the checkpoint's
// binlog file is gone (purged or expired), or, on MySQL with GTIDs, when
// the server purged transactions the checkpoint has not seen.
func checkRetained(conn *client.Conn, flavor string, pos position) error {
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
		return fmt.Errorf("binlog file %s of the checkpoint is no longer on the server (purged or expired): %w", pos.File, ErrResnapshotRequired)
	}
	if flavor == flavorMySQL && pos.GTID != "" {
		r, err := conn.Execute("SELECT @@GLOBAL.gtid_purged")
		if err != nil {
			return fmt.Errorf("read gtid_purged: %w", err)
		}
		purged, _ := r.GetString(0, 0)
		if strings.TrimSpace(purged) != "" {
			have, err1 := parseGTIDSet(flavor, pos.GTID)
			gone, err2 := parseGTIDSet(flavor, purged)
			if err1 == nil && err2 == nil && !have.Contain(gone) {
				return fmt.Errorf("the server purged transactions (gtid_purged %s) the checkpoint %s has not read: %w", purged, pos.GTID, ErrResnapshotRequired)
			}
		}
	}
	return nil
}
