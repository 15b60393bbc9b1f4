package mysql_test

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// charsetSamples is text valid in each character set MariaDB ships, in
// the script the set is for (SHOW CHARACTER SET; a set the server lists
// and this map lacks fails the test, so that none is skipped silently).
var charsetSamples = map[string]string{
	"armscii8": "Բարեւ ձեզ",
	"ascii":    "hello, world",
	"big5":     "中文測試",
	"cp1250":   "Zażółć gęślą jaźń",
	"cp1251":   "Привет, мир",
	"cp1256":   "مرحبا بالعالم",
	"cp1257":   "Ąčęėįšųūž labas",
	"cp850":    "café Ñandú ß",
	"cp852":    "Příliš žluťoučký kůň",
	"cp866":    "Привет, мир",
	"cp932":    "こんにちは世界①",
	"dec8":     "café Ñandú",
	"eucjpms":  "こんにちは世界",
	"euckr":    "안녕하세요 세계",
	"gb2312":   "你好世界",
	"gbk":      "你好世界",
	"geostd8":  "გამარჯობა",
	"greek":    "Καλημέρα κόσμε",
	"hebrew":   "שלום עולם",
	"hp8":      "café Ñandú",
	"keybcs2":  "Příliš žluťoučký kůň",
	"koi8r":    "Привет, мир",
	"koi8u":    "Привіт, світе",
	"latin1":   "héllo € Ž",
	"latin2":   "Zażółć gęślą jaźń",
	"latin5":   "Türkçe ğüşıöç İ",
	"latin7":   "Ąčęėįšųūž labas",
	"macce":    "Zażółć gęślą",
	"macroman": "café ñ ü ™",
	"sjis":     "こんにちは世界",
	"swe7":     "Räksmörgås",
	"tis620":   "สวัสดีชาวโลก",
	"ucs2":     "héllo Привет 世界",
	"ujis":     "こんにちは世界",
	"utf16":    "héllo 😀 Tiếng Việt 世界",
	"utf16le":  "héllo 😀 Tiếng Việt 世界",
	"utf32":    "héllo 😀 Tiếng Việt 世界",
	"utf8mb3":  "héllo Tiếng Việt 世界",
	"utf8mb4":  "héllo 😀 Tiếng Việt 世界",
}

// TestMySQLCharsets: text in every character set the server lists
// streams (c, u, d) as the text the server returns for
// CONVERT(col USING utf8mb4), as a backfill does. It was converted only
// from latin1: cp1251 Привет streamed as ������, and utf16 turned ASCII
// into \u0000h\u0000e…. VARCHAR columns in every set, with a second row
// holding every byte of each single-byte set; CHAR and TEXT and
// ENUM/SET columns in a few (the binlog logs those differently); the
// binary set (no text) as bytes. Once with the shapes from the binlog's
// table map (binlog_row_metadata = FULL), once from the schema history
// seeded from the catalog, and from the CREATE TABLE in the binlog
// (MINIMAL; the SQL parser refused every set TiDB does not support).
func TestMySQLCharsets(t *testing.T) {
	t.Run("table map", func(t *testing.T) {
		e := itest.NewMyEnv(t, "mycs")
		charsetStream(t, e, e.WriteConfig(""), false)
	})
	t.Run("schema history", func(t *testing.T) {
		e := minimalMyEnv(t, "mycsh")
		charsetStream(t, e, e.WriteConfig(""), false)
	})
	t.Run("schema history DDL", func(t *testing.T) {
		e := minimalMyEnv(t, "mycshd")
		charsetStream(t, e, e.WriteConfig(""), true)
	})
}

// charsetStream streams the changes; ddl: t is created while streaming
// (a table to capture at start aside), so that its shape comes from the
// CREATE TABLE in the binlog.
func charsetStream(t *testing.T, e *itest.MyEnv, cfg string, ddl bool) {
	if ddl {
		e.Exec("CREATE TABLE first (id INT PRIMARY KEY)")
	}
	r := e.Exec("SELECT CHARACTER_SET_NAME, MAXLEN FROM information_schema.CHARACTER_SETS ORDER BY 1")
	var sets, single []string
	for i := range r.Values {
		cs, _ := r.GetString(i, 0)
		n, _ := r.GetInt(i, 1)
		cs = strings.Clone(cs)
		if cs == "binary" {
			continue
		}
		if _, ok := charsetSamples[cs]; !ok {
			t.Errorf("the server has character set %s, which the test has no sample for", cs)
			continue
		}
		sets = append(sets, cs)
		if n == 1 {
			single = append(single, cs)
		}
	}
	sort.Strings(sets)
	defs := []string{"id INT PRIMARY KEY", "bin VARBINARY(40)"}
	var cols []string
	for _, cs := range sets {
		defs = append(defs, fmt.Sprintf("v_%s VARCHAR(300) CHARACTER SET %s", cs, cs))
		cols = append(cols, "v_"+cs)
	}
	defs = append(defs, "ch_cp1251 CHAR(20) CHARACTER SET cp1251", "ch_utf16 CHAR(30) CHARACTER SET utf16", "ch_sjis CHAR(20) CHARACTER SET sjis",
		"tx_cp1251 TEXT CHARACTER SET cp1251", "tx_utf32 TEXT CHARACTER SET utf32", "tx_gbk MEDIUMTEXT CHARACTER SET gbk",
		"e_cp1251 ENUM('Привет','Мир') CHARACTER SET cp1251", "e_utf16 ENUM('héllo','世界') CHARACTER SET utf16", "s_sjis SET('日本','語') CHARACTER SET sjis")
	cols = append(cols, "ch_cp1251", "ch_utf16", "ch_sjis", "tx_cp1251", "tx_utf32", "tx_gbk", "e_cp1251", "e_utf16", "s_sjis")
	create := "CREATE TABLE t (" + strings.Join(defs, ", ") + ")"
	if !ddl {
		e.Exec(create)
	}
	e.Exec("SET SESSION sql_mode = 'STRICT_ALL_TABLES'") // a sample a set cannot hold is an error, not '?'

	topic := e.Prefix + "." + e.DB + ".t"
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(t, 60*time.Second, "the stream to start", func() bool {
		if p.Exited() {
			t.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return strings.Contains(p.Out.String(), "streaming binlog")
	})
	if ddl {
		e.Exec(create)
	}
	l := newChangeLog(e, "t", cols...)
	names, vals := []string{"id", "bin"}, []string{"1", "'bytes ok'"}
	for _, cs := range sets {
		names, vals = append(names, "v_"+cs), append(vals, quoteSQL(charsetSamples[cs]))
	}
	names = append(names, cols[len(sets):]...)
	vals = append(vals, quoteSQL("Привет"), quoteSQL("héllo 😀"), quoteSQL("日本語"), quoteSQL("Привет, мир"), quoteSQL("héllo 😀 世界"), quoteSQL("你好世界"),
		quoteSQL("Мир"), quoteSQL("世界"), quoteSQL("日本,語"))
	l.Insert(1, "INSERT INTO t ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(vals, ", ")+")")
	// Row 2: every byte of each single-byte set, as that set's text.
	var all strings.Builder
	for b := 0x20; b <= 0xff; b++ {
		fmt.Fprintf(&all, "%02X", b)
	}
	names, vals = []string{"id"}, []string{"2"}
	for _, cs := range single {
		names, vals = append(names, "v_"+cs), append(vals, fmt.Sprintf("CONVERT(UNHEX('%s') USING %s)", all.String(), cs))
	}
	e.Exec("SET SESSION sql_mode = ''") // bytes a set leaves undefined are stored as they are
	l.Insert(2, "INSERT INTO t ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(vals, ", ")+")")
	var sets1 []string
	for _, c := range cols {
		if !strings.HasPrefix(c, "e_") && !strings.HasPrefix(c, "s_") {
			sets1 = append(sets1, fmt.Sprintf("%s = CONCAT(%s, ' ', %s)", c, c, c))
		}
	}
	l.Update(1, "UPDATE t SET "+strings.Join(sets1, ", ")+", e_cp1251 = 'Привет', e_utf16 = 'héllo', s_sjis = '語' WHERE id = 1")
	l.Delete(2)
	l.StopAndCheck(t, p, topic)
	for _, m := range itest.ReadTopic(t, topic) {
		if after, _ := m.Payload()["after"].(map[string]any); after != nil && after["id"] == float64(1) {
			if want := base64.StdEncoding.EncodeToString([]byte("bytes ok")); after["bin"] != want {
				t.Errorf("bin = %v, want %s", after["bin"], want)
			}
		}
	}
}

// quoteSQL is a string literal for a session with backslash escapes.
func quoteSQL(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
