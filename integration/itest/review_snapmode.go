package itest

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// CommittedOps is d.ops read with read_committed: what an exactly_once
// consumer sees.
func (d ModeDB) CommittedOps(t *testing.T) []string {
	t.Helper()
	var out []string
	if TopicEnd(d.Topic) == 0 {
		return out
	}
	EachRecordWithin(t, d.Topic, 60*time.Second, []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}, func(_ *kgo.Record, m Message) {
		pl := m.Payload()
		row, _ := pl["after"].(map[string]any)
		if row == nil {
			row, _ = pl["before"].(map[string]any)
		}
		out = append(out, fmt.Sprintf("%v%v", pl["op"], row["id"]))
	})
	sort.Strings(out)
	return out
}
