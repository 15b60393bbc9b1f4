package itest

// ShapeTable is a table a shape feature adds to the workload, as the
// backend creates it (backend.shapeTable). It has the columns of t1…t4
// (k, seq, v, vl on MariaDB, big) and a row is still named by k.
type ShapeTable struct {
	Feature     string
	Create      []string
	Keyless     bool // no primary key: the message key is null, k is read from the row
	KeyOnly     bool // a delete's old image carries the key only (no seq)
	NoKeyUpdate bool // the workload never changes k (set by addShapes)
}
