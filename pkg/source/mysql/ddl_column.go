package mysql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	tmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver" // the parser's literal values (go-mysql's canal uses it too)
	"github.com/shopspring/decimal"
)

// A column definition of CREATE/ALTER TABLE, as the schema history keeps
// it: what information_schema.COLUMNS would say of the column the
// definition makes, so that the decoder and columnDefault treat it as a
// column read from the catalog.

// columnFromDef is the column a definition makes, as information_schema
// would describe it; pk: the definition says PRIMARY KEY.
func (h *history) columnFromDef(n tableName, d *ast.ColumnDef, tableCharset string) (column, bool, error) {
	c := column{name: d.Name.Name.O, nullable: true, precision: -1, scale: -1, octets: -1}
	ft := d.Tp
	if ft == nil {
		return c, false, refuse(n, "column %s has no type", c.name)
	}
	flen, dec := ft.GetFlen(), ft.GetDecimal()
	cs := strings.ToLower(ft.GetCharset())
	if cs == "" && ft.GetCollate() != "" {
		cs = charsetOf(ft.GetCollate())
	}
	for _, o := range d.Options {
		if o.Tp == ast.ColumnOptionCollate && cs == "" {
			cs = charsetOf(o.StrValue)
		}
	}
	binary := cs == "binary"
	text := false
	sized := func(name string, size int) string { return fmt.Sprintf("%s(%d)", name, size) }
	switch ft.GetType() {
	case tmysql.TypeTiny:
		c.dataType = "tinyint"
	case tmysql.TypeShort:
		c.dataType = "smallint"
	case tmysql.TypeInt24:
		c.dataType = "mediumint"
	case tmysql.TypeLong:
		c.dataType = "int"
	case tmysql.TypeLonglong:
		c.dataType = "bigint"
	case tmysql.TypeNewDecimal:
		c.precision, c.scale = flen, dec
		if c.precision <= 0 {
			c.precision = 10
		}
		if c.scale < 0 {
			c.scale = 0
		}
		c.dataType, c.columnType = "decimal", fmt.Sprintf("decimal(%d,%d)", c.precision, c.scale)
	case tmysql.TypeFloat:
		c.dataType = "float"
		if flen > 0 && dec >= 0 {
			c.columnType = fmt.Sprintf("float(%d,%d)", flen, dec) // FLOAT(M,D): a double for Debezium
		}
	case tmysql.TypeDouble:
		c.dataType = "double"
	case tmysql.TypeBit:
		c.precision = max(flen, 1)
		c.dataType, c.columnType = "bit", sized("bit", c.precision)
	case tmysql.TypeDate, tmysql.TypeNewDate:
		c.dataType = "date"
	case tmysql.TypeDuration:
		c.dataType, c.fsp = "time", max(dec, 0)
	case tmysql.TypeDatetime:
		c.dataType, c.fsp = "datetime", max(dec, 0)
	case tmysql.TypeTimestamp:
		c.dataType, c.fsp = "timestamp", max(dec, 0)
	case tmysql.TypeYear:
		c.dataType = "year"
	case tmysql.TypeVarchar, tmysql.TypeVarString:
		c.dataType, text = pick(binary, "varbinary", "varchar"), !binary
		c.columnType = sized(c.dataType, max(flen, 0))
	case tmysql.TypeString:
		size := flen
		if size < 0 {
			size = 1
		}
		c.dataType, text = pick(binary, "binary", "char"), !binary
		c.columnType = sized(c.dataType, size)
		if binary {
			c.octets = size
		}
	case tmysql.TypeTinyBlob, tmysql.TypeBlob, tmysql.TypeMediumBlob, tmysql.TypeLongBlob:
		size := map[byte]string{tmysql.TypeTinyBlob: "tiny", tmysql.TypeMediumBlob: "medium", tmysql.TypeLongBlob: "long"}[ft.GetType()]
		c.dataType, text = size+pick(binary, "blob", "text"), !binary
	case tmysql.TypeJSON:
		c.dataType = "json"
		if h.mariadb { // MariaDB's JSON is LONGTEXT with a check
			c.dataType, c.columnType, cs, text = "longtext", "longtext", "utf8mb4", true
		}
	case tmysql.TypeEnum, tmysql.TypeSet:
		c.dataType, text = pick(ft.GetType() == tmysql.TypeEnum, "enum", "set"), true
		quoted := make([]string, len(ft.GetElems()))
		for i, v := range ft.GetElems() {
			quoted[i] = quoteMember(v) // the parser has dropped trailing spaces, as the server does
		}
		c.columnType = c.dataType + "(" + strings.Join(quoted, ",") + ")"
	default:
		return c, false, refuse(n, "column %s: type %s is not one the history knows", c.name, ft.String())
	}
	if c.columnType == "" {
		c.columnType = c.dataType
	}
	if tmysql.HasUnsignedFlag(ft.GetFlag()) && family(c.dataType) != "" && c.dataType != "year" && !text && !binary {
		c.columnType += " unsigned"
	}
	if text {
		c.charset = cs
		if c.charset == "" {
			c.charset = tableCharset
		}
	}
	pk := false
	for _, o := range d.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull:
			c.nullable = false
		case ast.ColumnOptionNull:
			c.nullable = true
		case ast.ColumnOptionPrimaryKey:
			c.nullable, pk = false, true
		case ast.ColumnOptionAutoIncrement:
			c.extra = "auto_increment"
		case ast.ColumnOptionDefaultValue:
			c.dfltRaw, c.extra = h.defaultRaw(&c, o.Expr)
		}
	}
	if c.dfltRaw == nil && h.mariadb && c.nullable && c.extra == "" {
		c.dfltRaw = []byte("NULL") // as MariaDB's information_schema writes it
	}
	c.typ = columnType(&c)
	return c, pk, nil
}

// defaultRaw writes a DEFAULT clause as information_schema.COLUMNS
// would (columnDefault reads it): MariaDB quotes literals and writes
// expressions as SQL; MySQL writes a literal's bare text and marks
// expressions DEFAULT_GENERATED.
func (h *history) defaultRaw(c *column, e ast.ExprNode) ([]byte, string) {
	text, kind := literal(e)
	switch kind {
	case litExpr: // CURRENT_TIMESTAMP, (expr)…: no value Debezium evaluates
		if h.mariadb {
			return []byte("current_timestamp()"), ""
		}
		return []byte("CURRENT_TIMESTAMP"), "DEFAULT_GENERATED"
	case litNull:
		if h.mariadb {
			return []byte("NULL"), ""
		}
		return nil, ""
	case litBits:
		if c.dataType == "bit" {
			return []byte("b'" + text + "'"), ""
		}
		text = bitsText(text) // X'41' or b'1000001' on a string column: its bytes
	case litNum:
		if d, err := decimal.NewFromString(text); err == nil && c.dataType == "decimal" {
			text = d.StringFixed(int32(c.scale)) // as the catalog writes it: 1.5 in DECIMAL(6,2) is 1.50
		}
		return []byte(text), ""
	}
	if !h.mariadb {
		return []byte(text), ""
	}
	return []byte("'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(text) + "'"), ""
}

// The kinds of DEFAULT clause literal reads.
const (
	litExpr = iota
	litNull
	litNum
	litStr
	litBits
)

// literal reads a constant DEFAULT: its text and kind (binary digits for
// litBits).
func literal(e ast.ExprNode) (string, int) {
	switch v := e.(type) {
	case *driver.ValueExpr:
		switch v.Kind() {
		case driver.KindNull:
			return "", litNull
		case driver.KindInt64:
			return strconv.FormatInt(v.GetInt64(), 10), litNum
		case driver.KindUint64:
			return strconv.FormatUint(v.GetUint64(), 10), litNum
		case driver.KindFloat32, driver.KindFloat64:
			return strconv.FormatFloat(v.GetFloat64(), 'g', -1, 64), litNum
		case driver.KindMysqlDecimal:
			return v.GetMysqlDecimal().String(), litNum
		case driver.KindString, driver.KindBytes:
			return v.GetString(), litStr
		case driver.KindBinaryLiteral, driver.KindMysqlBit:
			s := v.GetBinaryLiteral().ToBitLiteralString(true) // b'0101'
			return strings.TrimSuffix(strings.TrimPrefix(s, "b'"), "'"), litBits
		}
	case *ast.UnaryOperationExpr:
		s, kind := literal(v.V)
		if kind != litNum || v.Op != opcode.Minus && v.Op != opcode.Plus {
			return "", litExpr
		}
		if v.Op == opcode.Minus {
			if strings.HasPrefix(s, "-") {
				return s[1:], litNum
			}
			return "-" + s, litNum
		}
		return s, litNum
	}
	return "", litExpr
}

// bitsText turns binary digits into the bytes they spell.
func bitsText(digits string) string {
	for len(digits)%8 != 0 {
		digits = "0" + digits
	}
	b := make([]byte, len(digits)/8)
	for i := range b {
		v, _ := strconv.ParseUint(digits[i*8:i*8+8], 2, 8)
		b[i] = byte(v)
	}
	return string(b)
}
