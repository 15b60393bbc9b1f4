package metrics

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The resnapshot count is scraped as the source reports it, and the
// metrics table (docs/aws.md) names it.
func TestResnapshots(t *testing.T) {
	reg := NewRegistry()
	m := NewPipeline(reg, "shop")
	n := int64(0)
	m.WatchResnapshots(func() int64 { return n })
	n = 2
	const want = `tributary_source_resnapshots_total{pipeline="shop"} 2`
	if got := scrape(t, reg); !strings.Contains(got, want) {
		t.Errorf("want %s:\n%s", want, got)
	}
	var nilM *Pipeline
	nilM.WatchResnapshots(func() int64 { return 1 }) // records nothing, no panic

	doc, err := os.ReadFile("../../docs/aws.md")
	if err != nil {
		t.Skipf("docs/aws.md: %v", err)
	}
	if !bytes.Contains(doc, []byte("`"+sourceResnapshotsName+"{pipeline}`")) {
		t.Errorf("docs/aws.md does not name `%s{pipeline}`", sourceResnapshotsName)
	}
}
