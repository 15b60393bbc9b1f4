package mysql

import (
	"encoding/hex"
	"fmt"
	"strconv"
)

// MariaDB's fixed-size binary types (UUID since 10.7, INET4 since 10.10,
// INET6 since 10.5): information_schema names them, the table map does
// not (a BINARY(n) there), and a rows event carries their bytes as a
// BINARY(n) value, in the order the server writes the text in (not the
// swapped order UUID keeps on disk for its index), with the trailing zero
// bytes cut. The snapshot's text protocol hands over their text form.
// Tributary publishes that text: UUID as Debezium's MariaDB connector
// does (a string named io.debezium.data.Uuid), INET4 and INET6, whose DDL
// Debezium's parser refuses, as plain strings (docs/types.md).

// fixedBinaryWidth is the byte width of a fixed-size binary type, 0 for
// other types.
func fixedBinaryWidth(dataType string) int {
	switch dataType {
	case "uuid", "inet6":
		return 16
	case "inet4":
		return 4
	}
	return 0
}

// appendFixedBinaryText appends the text form MariaDB prints for raw, the
// bytes of a rows event's value of a fixed-size binary column (trailing
// zero bytes cut, which it puts back).
func appendFixedBinaryText(b []byte, dataType string, raw []byte) ([]byte, error) {
	n := fixedBinaryWidth(dataType)
	if len(raw) > n {
		return b, fmt.Errorf("%s: %d bytes in the binlog, want at most %d", dataType, len(raw), n)
	}
	var v [16]byte
	copy(v[:], raw)
	switch dataType {
	case "uuid":
		return appendUUID(b, v[:16]), nil
	case "inet4":
		return appendInet4(b, v[:4]), nil
	default:
		return appendInet6(b, v[:16]), nil
	}
}

// appendUUID appends the 8-4-4-4-12 lower-case hex form.
func appendUUID(b []byte, v []byte) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], v[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], v[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], v[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], v[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], v[10:16])
	return append(b, buf[:]...)
}

func appendInet4(b []byte, v []byte) []byte {
	for i, x := range v {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	return b
}

// appendInet6 appends an IPv6 address as MariaDB's INET6 prints it, which
// is not RFC 5952's form: the longest run of zero groups becomes "::"
// even when it is one group long (the first of runs of equal length),
// and an address whose first five groups are zero and whose sixth is
// zero or ffff ends in dotted IPv4 ("::1.2.3.4", "::ffff:1.2.3.4").
func appendInet6(b []byte, v []byte) []byte {
	var w [8]uint16
	for i := range w {
		w[i] = uint16(v[2*i])<<8 | uint16(v[2*i+1])
	}
	gapPos, gapLen := -1, 0
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > gapLen {
			gapPos, gapLen = i, j-i
		}
		i = j
	}
	if gapPos == 0 && (gapLen == 6 || gapLen == 5 && w[5] == 0xffff) {
		b = append(b, "::"...)
		if gapLen == 5 {
			b = append(b, "ffff:"...)
		}
		return appendInet4(b, v[12:16])
	}
	for i := 0; i < 8; i++ {
		if i == gapPos {
			if i == 0 {
				b = append(b, ':')
			}
			b = append(b, ':')
			i += gapLen - 1
			continue
		}
		b = strconv.AppendUint(b, uint64(w[i]), 16)
		if i < 7 {
			b = append(b, ':')
		}
	}
	return b
}
