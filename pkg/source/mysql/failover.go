package mysql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// checkHasGTIDs fails with source.ErrResnapshotRequired when the server lacks
// transactions the checkpoint has read. A checkpoint with GTIDs resumes by
// GTID on whatever server the URL names, so that after a failover the new
// primary (a replica that received the transactions, with binlog files
// of its own) resumes where the old one stopped. A server that lacks some
// of them — a replica that was behind when it was promoted, a stale old
// primary, another cluster — cannot: streaming from it would skip or
// invent changes. The error names the GTIDs.
func checkHasGTIDs(conn *client.Conn, flavor string, pos position) error {
	have, err := parseGTIDSet(flavor, pos.GTID)
	if err != nil {
		return err
	}
	variable := "gtid_executed"
	if flavor == flavorMariaDB {
		variable = "gtid_binlog_pos"
	}
	r, err := conn.Execute("SELECT @@GLOBAL." + variable)
	if err != nil {
		return fmt.Errorf("read %s: %w", variable, err)
	}
	s, _ := r.GetString(0, 0)
	server, err := parseGTIDSet(flavor, s)
	if err != nil {
		return fmt.Errorf("server %s: %w", variable, err)
	}
	var missing []string
	if flavor == flavorMariaDB {
		missing = missingMariaDB(have.(*gomysql.MariadbGTIDSet), server.(*gomysql.MariadbGTIDSet))
	} else if !server.Contain(have) {
		missing = []string{pos.GTID}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("this server lacks transactions the checkpoint has already read: checkpoint GTIDs %s, server %s %s, missing %s. "+
		"It is not the server the checkpoint was read from, nor a replica of it that received them: after a failover to a replica that was behind, "+
		"those transactions are lost on the new primary, and streaming from it would publish a history that never happened: %w",
		pos.GTID, variable, orNone(strings.TrimSpace(s)), strings.Join(missing, ","), source.ErrResnapshotRequired)
}

// missingMariaDB lists the GTIDs of have whose domain the server's
// gtid_binlog_pos has not reached: MariaDB numbers the transactions of a
// domain in order (gtid_strict_mode), so a server whose last GTID in a
// domain has a lower sequence number lacks the rest.
func missingMariaDB(have, server *gomysql.MariadbGTIDSet) []string {
	last := map[uint32]uint64{}
	for d, byServer := range server.Sets {
		for _, g := range byServer {
			last[d] = max(last[d], g.SequenceNumber)
		}
	}
	var missing []string
	for d, byServer := range have.Sets {
		for _, g := range byServer {
			if seq, ok := last[d]; !ok || seq < g.SequenceNumber {
				missing = append(missing, g.String())
			}
		}
	}
	sort.Strings(missing)
	return missing
}

func orNone(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

// checkPurgedMariaDB compares the checkpoint with the Gtid_list event that
// opens the server's oldest binlog file: the GTID state before it. A
// domain the list has gone further in than the checkpoint had
// transactions the pipeline never read in the purged files. (A purge of
// only what was read loses nothing: streaming resumes by GTID.)
func checkPurgedMariaDB(conn *client.Conn, pos position) error {
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return fmt.Errorf("list binary logs (needs the BINLOG MONITOR privilege): %w", err)
	}
	if r.RowNumber() == 0 {
		return nil
	}
	first, _ := r.GetString(0, 0)
	ev, err := conn.Execute("SHOW BINLOG EVENTS IN '" + strings.ReplaceAll(first, "'", "''") + "' LIMIT 3")
	if err != nil {
		return fmt.Errorf("read the GTID list of binlog %s: %w", first, err)
	}
	for i := 0; i < ev.RowNumber(); i++ {
		typ, _ := ev.GetString(i, 2)
		if typ != "Gtid_list" {
			continue
		}
		info, _ := ev.GetString(i, 5)
		before, err := parseGTIDSet(flavorMariaDB, strings.Trim(strings.TrimSpace(info), "[]"))
		if err != nil {
			return nil // an unreadable list: the server's own 1236 check remains
		}
		have, err := parseGTIDSet(flavorMariaDB, pos.GTID)
		if err != nil {
			return err
		}
		if gone := missingMariaDB(before.(*gomysql.MariadbGTIDSet), have.(*gomysql.MariadbGTIDSet)); len(gone) > 0 {
			return fmt.Errorf("the server purged transactions the checkpoint has not read: its oldest binlog %s starts after %s, the checkpoint is at %s: %w",
				first, strings.Trim(info, "[]"), pos.GTID, source.ErrResnapshotRequired)
		}
		return nil
	}
	return nil
}

// advance records g as the position of its domain. A MariaDB replication
// position holds one GTID per domain, the last one (gtid_binlog_pos): a
// set keyed by domain and server, as go-mysql's AddSet keeps it, would
// hold both 0-1-90 and 0-2-91 after a failover to a primary with another
// server_id, and the server refuses such a start position (a duplicate
// domain).
func advance(set *gomysql.MariadbGTIDSet, g gomysql.MariadbGTID) {
	set.Sets[g.DomainID] = map[uint32]*gomysql.MariadbGTID{g.ServerID: &g}
}
