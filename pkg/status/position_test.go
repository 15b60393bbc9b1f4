package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestPositionInWords: status shows a position as a person reads it, not
// the sources' JSON: the cursor in its source type's words
// (source.Kind.Summary), and an unfinished initial backfill.
func TestPositionInWords(t *testing.T) {
	pg, _ := capture.KindOf("postgres")
	my, _ := capture.KindOf("mysql")
	for _, c := range []struct {
		kind      source.Kind
		pos, want string
	}{
		{pg, `{"slot":"tributary_shop","lsn":"0/1A2B3C4","backfilled":true,"tables":{"public.a":1}}`, "LSN 0/1A2B3C4 (slot tributary_shop)"},
		{pg, `{"slot":"tributary_shop","lsn":"0/16","backfilled":false}`, "LSN 0/16 (slot tributary_shop), initial backfill not done"},
		{my, `{"flavor":"mariadb","gtid":"0-1-77","file":"mysql-bin.000042","pos":1234,"backfilled":true,"shapes":"x"}`, "binlog mysql-bin.000042:1234, GTID set 0-1-77"},
		{my, `{"flavor":"mysql","file":"binlog.000003","pos":4,"backfilled":true}`, "binlog binlog.000003:4"},
		{pg, `{"other":1}`, ""},
		{my, `{"other":1}`, ""},
		{my, `{"slot":"s","lsn":"0/16"}`, ""},
	} {
		if got := positionSummary([]byte(c.pos), c.kind.Summary); got != c.want {
			t.Errorf("%s: %q, want %q", c.pos, got, c.want)
		}
	}
	r := Build("shop", checkpoint.Checkpoint{Position: []byte(`{"slot":"s","lsn":"0/16","backfilled":true}`), UpdatedAt: time.Now()}, true, nil, time.Now(), pg.Summary)
	var out bytes.Buffer
	Print(&out, r)
	if !strings.Contains(out.String(), "LSN 0/16 (slot s)") || strings.Contains(out.String(), `"lsn"`) {
		t.Errorf("status prints the position as JSON:\n%s", out.String())
	}
}
