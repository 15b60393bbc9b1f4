package mysql

import (
	"reflect"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// The cursor this driver hands the capture loop at a commit, byte for
// byte: the loop seals it into the checkpoint (pkg/capture's golden
// tests), and checkpoints of every release since must read back.
const goldenCursor = `{"flavor":"mariadb","gtid":"0-1-42","file":"mysql-bin.000003","pos":1234}`

// goldenSealed is goldenCursor as the loop sealed it (with a schema
// history), goldenLegacy an unfinished backfill of a release that
// backfilled before streaming.
const (
	goldenSealed = `{"flavor":"mariadb","gtid":"0-1-42","file":"mysql-bin.000003","pos":1234,"shapes":{"scope":"d","tables":[]},` +
		`"backfilled":true,"tables":["d.t","d.u"],"snapshot":{"done":["d.t"]}}`
	goldenLegacy = `{"flavor":"mysql","file":"binlog.000002","pos":157,"backfilled":false,"table":"d.t","after":["01"]}`
)

func TestPositionGolden(t *testing.T) {
	s := &Source{}
	if got := string(s.encode(position{Flavor: flavorMariaDB, GTID: "0-1-42", File: "mysql-bin.000003", Pos: 1234})); got != goldenCursor {
		t.Fatalf("cursor\n %s\nwant\n %s", got, goldenCursor)
	}
	for _, doc := range []string{goldenCursor, sourcetest.Cursor(t, goldenSealed)} {
		p, err := decodePosition([]byte(doc))
		if err != nil || p.Flavor != flavorMariaDB || p.GTID != "0-1-42" || p.File != "mysql-bin.000003" || p.Pos != 1234 {
			t.Fatalf("decode %s: %+v %v", doc, p, err)
		}
	}
	p, err := decodePosition([]byte(sourcetest.Cursor(t, goldenSealed)))
	if err != nil || string(p.Shapes) != `{"scope":"d","tables":[]}` {
		t.Fatalf("shapes: %s %v", p.Shapes, err)
	}
	p, err = decodePosition([]byte(sourcetest.Cursor(t, goldenLegacy)))
	if err != nil || p.File != "binlog.000002" || p.Pos != 157 {
		t.Fatalf("legacy: %+v %v", p, err)
	}
	st := legacyState(p, []string{"d.u", "d.t", "d.a"})
	if !reflect.DeepEqual(st.Done, []string{"d.a"}) || len(st.Tables) != 2 || st.Tables[0].Table != "d.t" ||
		len(st.Tables[0].Key) != 1 || string(st.Tables[0].Key[0]) != "\x01" || st.Tables[1].Table != "d.u" || len(st.Tables[1].Key) != 0 {
		t.Fatalf("legacy state: %+v", st)
	}
}
