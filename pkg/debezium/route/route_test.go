package route

import (
	"errors"
	"strings"
	"testing"
)

// The replacement syntax is java.util.regex.Matcher's: the values below
// are what Java's Pattern.compile(regex).matcher(topic).replaceFirst(repl)
// returns for a topic the regex matches as a whole.
func TestRenameJavaReplacement(t *testing.T) {
	for _, c := range []struct {
		regex, repl, topic, want string
		matches                  bool
	}{
		{`(.*)\.orders_\d+`, `$1.orders`, "shop.public.orders_7", "shop.public.orders", true},
		{`(.*)\.orders_\d+`, `$1.orders`, "shop.public.orders_7x", "shop.public.orders_7x", false}, // a whole-topic match only
		{`orders`, `x`, "shop.public.orders", "shop.public.orders", false},
		{`(?<head>.*)\.t_(\d+)`, `${head}.t-$2`, "p.s.t_12", "p.s.t-12", true},
		{`(a)(b)`, `$12`, "ab", "a2", true}, // $1 then a literal 2: there is no group 12
		{`(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)`, `$11`, "abcdefghijk", "k", true},
		{`(.*)`, `\$1-\\`, "x", `$1-\`, true},
		{`(a)|(b)`, `[$1$2]`, "b", "[b]", true}, // a group outside the match adds nothing
		{`.*`, `fixed`, "anything", "fixed", true},
		{`(.*)`, `$0!`, "t", "t!", true},
	} {
		r, err := NewRename(c.regex, c.repl)
		if err != nil {
			t.Fatalf("%s / %s: %v", c.regex, c.repl, err)
		}
		got, ok := r.Apply(c.topic)
		if got != c.want || ok != c.matches {
			t.Errorf("%s / %s on %s: %q %v, want %q %v", c.regex, c.repl, c.topic, got, ok, c.want, c.matches)
		}
	}
}

func TestRenameErrors(t *testing.T) {
	for _, c := range []struct {
		regex, repl string
		part        Part
		says        string
	}{
		{`(unclosed`, `x`, PartRegex, "missing closing )"},
		{`a(?=b)`, `x`, PartRegex, "invalid or unsupported Perl syntax"},
		{`(.*)`, `$2`, PartReplacement, "$2: the regex has 1 group(s)"},
		{`(.*)`, `${nope}`, PartReplacement, "no group named nope"},
		{`(.*)`, `${1x}`, PartReplacement, "not a group name"},
		{`(.*)`, `cost$`, PartReplacement, "names no group"},
		{`(.*)`, `$x`, PartReplacement, "not a group number"},
		{`(.*)`, `end\`, PartReplacement, "escapes nothing"},
	} {
		_, err := NewRename(c.regex, c.repl)
		var re *Error
		if !errors.As(err, &re) || re.Part != c.part || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s / %s: %v, want a part-%d error saying %q", c.regex, c.repl, err, c.part, c.says)
		}
	}
}

func TestRoutes(t *testing.T) {
	must := func(regex, repl string) *Rename {
		r, err := NewRename(regex, repl)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rs := &Routes{
		Logical: &Logical{Topic: must(`(.*)\.o_\d+`, `$1.o`), EnforceUniqueness: true, KeyFieldName: DefaultKeyFieldName},
		Regex:   must(`p\.s\.(.*)`, `cdc.$1`),
	}
	got := rs.Route("p.s.o_1")
	want := Routed{Topic: "cdc.o", SchemaBase: "p.s.o", KeyField: DefaultKeyFieldName, KeyValue: "p.s.o_1", Changed: true}
	if got != want {
		t.Errorf("shard: %+v, want %+v", got, want)
	}
	if got := rs.Route("q.s.x"); got != (Routed{Topic: "q.s.x", SchemaBase: "q.s.x"}) {
		t.Errorf("untouched: %+v", got)
	}
	rs.Logical.KeyField = must(`.*_(\d+)`, `shard-$1`)
	rs.Logical.KeyFieldName = "shard"
	if got := rs.Route("p.s.o_1"); got.KeyField != "shard" || got.KeyValue != "shard-1" {
		t.Errorf("key field: %+v", got)
	}
	rs.Logical.EnforceUniqueness = false
	if got := rs.Route("p.s.o_1"); got.KeyField != "" {
		t.Errorf("without uniqueness: %+v", got)
	}
	// An empty topic leaves the record where it was, as Debezium does.
	empty := &Routes{Logical: &Logical{Topic: must(`.*`, ``)}}
	if got := empty.Route("p.s.t"); got.Changed || got.Topic != "p.s.t" {
		t.Errorf("empty: %+v", got)
	}
	var none *Routes
	if got := none.Route("p.s.t"); got.Changed || got.Topic != "p.s.t" || got.SchemaBase != "p.s.t" {
		t.Errorf("nil: %+v", got)
	}
}
