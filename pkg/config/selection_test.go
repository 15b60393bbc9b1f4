package config

import (
	"regexp"
	"strings"
	"testing"
)

func TestSelectionTables(t *testing.T) {
	sel, err := Source{
		Tables:        []string{"public.orders", `shop\.order_.*`, `public.Line_Items`},
		ExcludeTables: []string{`shop\.order_archive`},
	}.Selection()
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]bool{
		"public.orders":      true,  // plain name
		"public.Orders":      false, // plain names match exactly, as before
		"shop.order_lines":   true,  // regular expression
		"SHOP.ORDER_LINES":   true,  // case-insensitive, as Debezium
		"shop.order_archive": false, // excluded
		"xshop.order_lines":  false, // anchored at the start
		"shop.order_lines_x": true,  // .* to the end
		"public.line_items":  false, // plain: exact
		"public.Line_Items":  true,
		"other.orders":       false,
	} {
		if got := sel.Wants(table, true); got != want {
			t.Errorf("Wants(%s) = %v, want %v", table, got, want)
		}
	}
	if got := sel.Unmatched([]string{"public.orders"}); len(got) != 1 || got[0] != `shop\.order_.*` {
		t.Errorf("Unmatched = %q", got)
	}

	// Without a list: the default selection, minus the exclusions.
	sel, _ = Source{ExcludeTables: []string{`public\.audit_.*`}}.Selection()
	if !sel.Wants("public.orders", true) || sel.Wants("public.nopk", false) || sel.Wants("public.audit_log", true) {
		t.Error("exclude_tables without tables: want the default selection minus public.audit_*")
	}
}

func TestSelectionColumns(t *testing.T) {
	sel, err := Source{
		ExcludeColumns: []string{`public\.customers\.ssn`},
		MaskColumns: []MaskColumns{
			{Columns: []string{`public\.customers\.email`}, Hash: "SHA-256", Salt: "s4lt"},
			{Columns: []string{`public\.customers\.email2`}, Hash: "SHA-256", Salt: "s4lt", HashVersion: "v2"},
			{Columns: []string{`.*\.phone`}, Chars: 5},
		},
	}.Selection()
	if err != nil {
		t.Fatal(err)
	}
	if ex, m := sel.Column("public.customers", "ssn"); !ex || m != nil {
		t.Error("ssn: want excluded")
	}
	if ex, m := sel.Column("public.customers", "name"); ex || m != nil {
		t.Error("name: want kept")
	}
	// Known answers from Java: MessageDigest SHA-256 over the salt, then
	// ObjectOutputStream.writeObject(value) (v1) or value.getBytes() (v2),
	// as Debezium's MaskStrings hashes.
	for _, c := range []struct{ col, value, want string }{
		{"email", "alice@example.com", "f6f1d826bd99f2e22b03ec3d7d97c386e332de4a66b6d24d1cde90b1b87055e8"},
		{"email", "ünï\x00😀", "57335984251f3cccd56bdf095b8082974429e2c87a4d94762f6840aedb87baf4"},
		{"email2", "alice@example.com", "a7dd905632b7d0096b9ce51b1dd21fdb1b1d9684eb5d909561b5703a3ddc6c80"},
	} {
		_, m := sel.Column("public.customers", c.col)
		if m == nil {
			t.Fatalf("%s: not masked", c.col)
		}
		if got := m.Apply([]byte(c.value), 0); got != c.want {
			t.Errorf("%s %q: hash %s, want %s", c.col, c.value, got, c.want)
		}
		if got := m.Apply([]byte(c.value), 10); got != c.want[:10] {
			t.Errorf("%s %q: hash cut to 10: %s", c.col, c.value, got)
		}
		if _, fixed := m.Null(); fixed {
			t.Errorf("%s: a hash must keep null", c.col)
		}
	}
	_, m := sel.Column("shop.people", "phone")
	if m == nil || m.Apply([]byte("555-1234"), 0) != "*****" {
		t.Fatal("phone: want *****")
	}
	if s, fixed := m.Null(); !fixed || s != "*****" {
		t.Error("a fixed mask replaces null too (Debezium's mask converter runs on nulls)")
	}
	if strings.Contains(m.Describe(), "s4lt") {
		t.Error("the salt must never be described")
	}
}

func TestJavaSerializedLongString(t *testing.T) {
	long := strings.Repeat("a", 70000)
	b := javaSerializedString([]byte(long))
	if b[4] != 0x7C || len(b) != 4+1+8+70000 {
		t.Errorf("a string over 65535 bytes is TC_LONGSTRING with an 8-byte length; got tag %x, %d bytes", b[4], len(b))
	}
}

// FuzzIsPlainTable: IsPlainTable accepts exactly what the regular
// expression it replaced accepted.
func FuzzIsPlainTable(f *testing.F) {
	for _, s := range []string{"public.orders", "shop.order_items", "a.b.c", ".t", "s.", "ü.ñ2", "s.t-1", "s.t*", "s\xff.t", "", "٣.٤"} {
		f.Add(s)
	}
	was := regexp.MustCompile(`^[\p{L}\p{N}_-]+\.[\p{L}\p{N}_-]+$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsPlainTable(s), was.MatchString(s); got != want {
			t.Errorf("IsPlainTable(%q) = %v, the regular expression says %v", s, got, want)
		}
	})
}
