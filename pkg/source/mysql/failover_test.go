package mysql

import (
	"reflect"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

func mariaSet(t *testing.T, s string) *gomysql.MariadbGTIDSet {
	t.Helper()
	set, err := parseGTIDSet(flavorMariaDB, s)
	if err != nil {
		t.Fatal(err)
	}
	return set.(*gomysql.MariadbGTIDSet)
}

// A server has what the checkpoint read when, in every domain of the
// checkpoint, its last GTID is at least as far; otherwise the GTIDs it
// lacks are named.
func TestMissingMariaDB(t *testing.T) {
	for _, c := range []struct {
		have, server string
		want         []string
	}{
		{"0-1-100", "0-1-100", nil},
		{"0-1-100", "0-2-150", nil}, // a promoted replica that wrote more
		{"0-1-100", "0-1-90", []string{"0-1-100"}},
		{"0-2-120", "0-1-110", []string{"0-2-120"}}, // the stale old primary
		{"0-1-100,1-1-5", "0-1-100", []string{"1-1-5"}},
		{"0-1-100", "", []string{"0-1-100"}},
	} {
		got := missingMariaDB(mariaSet(t, c.have), mariaSet(t, c.server))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("have %s, server %s: missing %v, want %v", c.have, c.server, got, c.want)
		}
	}
}

// The streamed position keeps one GTID per domain, the last: after a
// failover to a primary with another server_id, a set with both 0-1-90
// and 0-2-91 is a start position MariaDB refuses.
func TestAdvanceOneGTIDPerDomain(t *testing.T) {
	set := mariaSet(t, "0-1-90,1-1-7")
	advance(set, gomysql.MariadbGTID{DomainID: 0, ServerID: 2, SequenceNumber: 91})
	if got := set.String(); got != "0-2-91,1-1-7" {
		t.Errorf("position %s, want 0-2-91,1-1-7", got)
	}
}
