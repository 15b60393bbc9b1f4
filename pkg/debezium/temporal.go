package debezium

import (
	"bytes"
	"math"
	"strconv"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// appendZonedTimestamp appends an io.debezium.time.ZonedTimestamp string
// for µs since the epoch, in UTC, as Debezium's PostgreSQL connector formats
// timestamptz: ZonedTimestamp.toIsoString with the column's fractional
// width. Width 1–9 prints exactly that many fractional digits
// ("2024-01-02T03:04:05.120000Z" for width 6); any other width uses
// ISO_OFFSET_DATE_TIME, which prints seconds always and the fraction only
// when non-zero, trailing zeros stripped ("2024-01-02T03:04:05.12Z").
// Years follow ISO_LOCAL_DATE: four digits, '+' above 9999, '-' before year
// 0 (proleptic, year 0 = 1 BC, as in Go).
//
// PostgreSQL's ±infinity, which Debezium writes as "infinity"/"-infinity",
// has no µs value; we take math.MaxInt64 / math.MinInt64 to mean them.
func appendZonedTimestamp(b []byte, micros int64, width int) []byte {
	switch micros {
	case math.MaxInt64:
		return append(b, `"infinity"`...)
	case math.MinInt64:
		return append(b, `"-infinity"`...)
	}
	return appendZonedInstant(b, time.UnixMicro(micros).UTC(), width)
}

// appendZonedInstant writes t (UTC) as appendZonedTimestamp does.
func appendZonedInstant(b []byte, t time.Time, width int) []byte {
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	nanos := t.Nanosecond()

	b = append(b, '"')
	switch {
	case year > 9999:
		b = append(b, '+')
		b = appendPadded(b, year, 4)
	case year < 0:
		b = append(b, '-')
		b = appendPadded(b, -year, 4)
	default:
		b = appendPadded(b, year, 4)
	}
	b = append(b, '-')
	b = appendPadded(b, int(month), 2)
	b = append(b, '-')
	b = appendPadded(b, day, 2)
	b = append(b, 'T')
	b = appendPadded(b, hour, 2)
	b = append(b, ':')
	b = appendPadded(b, minute, 2)
	b = append(b, ':')
	b = appendPadded(b, sec, 2)
	if width >= 1 && width <= 9 {
		b = append(b, '.')
		b = appendFraction(b, nanos, width)
	} else if nanos != 0 {
		digits := 9
		for n := nanos; n%10 == 0; n /= 10 {
			digits--
		}
		b = append(b, '.')
		b = appendFraction(b, nanos, digits)
	}
	return append(b, 'Z', '"')
}

// appendPadded appends a non-negative v with at least width digits.
func appendPadded(b []byte, v, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	for n := len(buf) - i; n < width; n++ {
		b = append(b, '0')
	}
	return append(b, buf[i:]...)
}

// appendFraction appends the first digits (1–9) of a nanosecond fraction,
// truncating as java.time's appendFraction does.
func appendFraction(b []byte, nanos, digits int) []byte {
	var buf [9]byte
	for i := 8; i >= 0; i-- {
		buf[i] = byte('0' + nanos%10)
		nanos /= 10
	}
	return append(b, buf[:digits]...)
}

// appendZonedTime appends an io.debezium.time.ZonedTime string for µs
// since midnight UTC, as Debezium formats a PostgreSQL timetz moved to UTC
// (DateTimeFormatter.ISO_OFFSET_TIME): "HH:mm:ss", the fraction only when
// non-zero with trailing zeros stripped, then "Z".
func appendZonedTime(b []byte, micros int64) []byte {
	secs, us := micros/1e6, int(micros%1e6)
	b = append(b, '"')
	b = appendPadded(b, int(secs/3600), 2)
	b = append(b, ':')
	b = appendPadded(b, int(secs/60%60), 2)
	b = append(b, ':')
	b = appendPadded(b, int(secs%60), 2)
	if us != 0 {
		digits := 6
		for n := us; n%10 == 0; n /= 10 {
			digits--
		}
		b = append(b, '.')
		b = appendFraction(b, us*1000, digits)
	}
	return append(b, 'Z', '"')
}

// appendFarTimestamp writes a change.FarTimestamp as Debezium does:
// milliseconds (Timestamp.toEpochMillis) and zoned strings exact; µs and
// ns as Conversions.toEpochMicros and toEpochNanos compute them, TimeUnit's
// saturating multiplication of the seconds plus the fraction in Java's
// wrapping long arithmetic (so 294276-12-31T23:59:59.999999 is
// -9223372036853775810 µs, as Debezium 3.6 writes it).
func appendFarTimestamp(b []byte, enc colEnc, text []byte, width int) ([]byte, error) {
	whole, frac, ok := bytes.Cut(text, []byte{'.'})
	sec, err := strconv.ParseInt(string(whole), 10, 64)
	us, err2 := strconv.ParseInt(string(frac), 10, 64)
	if !ok || err != nil || err2 != nil || len(frac) != 6 || us < 0 {
		return b, ErrValueKind
	}
	if pastMillis(enc, sec) {
		return b, ErrValueRange
	}
	switch enc {
	case encTimestampMillis:
		return strconv.AppendInt(b, sec*1000+us/1000, 10), nil
	case encTimestampMicros:
		return strconv.AppendInt(b, saturatingMul(sec, 1e6)+us, 10), nil
	case encTimestampNanos:
		return strconv.AppendInt(b, saturatingMul(sec, 1e9)+us*1000, 10), nil
	}
	return appendZonedInstant(b, time.Unix(sec, us*1000).UTC(), width), nil
}

// pastMillis: sec is past what Instant.toEpochMilli holds, for the forms
// that need it (µs and ns saturate instead). Only LocalDateTime.MAX and MIN
// are, the schema default of DEFAULT 'infinity' (pkg/source/postgres
// infinityDefault): Debezium has no default there.
func pastMillis(enc colEnc, sec int64) bool {
	return enc != encTimestampMicros && enc != encTimestampNanos && (sec > math.MaxInt64/1000-1 || sec < math.MinInt64/1000+1)
}

// noFarDefault: v is a change.FarTimestamp that p's form cannot hold (see
// pastMillis), so a schema default of v is none.
func (p *colPlan) noFarDefault(v *change.Value) bool {
	if v.Kind != change.Text || p.enc != encTimestampMillis && p.enc != encZoned {
		return false
	}
	whole, _, _ := bytes.Cut(v.Bytes, []byte{'.'})
	sec, err := strconv.ParseInt(string(whole), 10, 64)
	return err == nil && pastMillis(p.enc, sec)
}

// saturatingMul is Java's TimeUnit conversion: d × n, or the long bound it
// passes.
func saturatingMul(d, n int64) int64 {
	switch {
	case d > math.MaxInt64/n:
		return math.MaxInt64
	case d < -(math.MaxInt64 / n):
		return math.MinInt64
	}
	return d * n
}
