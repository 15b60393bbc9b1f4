package debezium

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestOutboxExpandNestedMergeKeepsMembers: in an array of objects whose
// members hold arrays of objects of different fields, a member of a later
// element's inner object is not dropped: the inner objects' fields are
// merged as the outer ones' are. A member whose type differs from the
// merged field's sends the payload out as the string, with a warning,
// rather than without that member.
func TestOutboxExpandNestedMergeKeepsMembers(t *testing.T) {
	o := outboxOptions(t)
	o.ExpandJSONPayload = true
	e := NewEncoder(Options{TopicPrefix: "shop", Outbox: o})
	_, rec, err := e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate,
		change.TextValue(`{"o":[{"p":[{"q":1}]},{"p":[{"q":2,"r":"s"}]}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rec.Value), `"r":"s"`) || rec.Warning != "" {
		t.Errorf("the member r of the second element's inner object is not in the expanded payload (warning %q): %s", rec.Warning, rec.Value)
	}
	for _, payload := range []string{
		`{"o":[{"p":{"q":1}},{"p":{"q":2,"r":"s"}}]}`,
		`{"o":[{"p":[[{"q":1}]]},{"p":[[{"q":2,"r":"s"}]]}]}`,
		`{"o":[{"p":{"q":1}},{"p":{"q":"two"}}]}`,
	} {
		_, rec, err := e.AppendOutbox(nil, outboxEvent(outboxTable(), change.OpCreate, change.TextValue(payload)))
		if err != nil {
			t.Fatal(err)
		}
		if rec.Expanded {
			for _, member := range []string{`"r":"s"`, `"q":"two"`} {
				if strings.Contains(payload, member) && !strings.Contains(string(rec.Value), member) {
					t.Errorf("%s: expanded without %s: %s", payload, member, rec.Value)
				}
			}
		} else if rec.Warning == "" {
			t.Errorf("%s: published as the string without a warning", payload)
		}
	}
}
