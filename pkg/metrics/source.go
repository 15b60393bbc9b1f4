package metrics

// Names of the source connection metrics.
const (
	sourceConnectedName  = "tributary_source_connected"
	sourceReconnectsName = "tributary_source_reconnects_total"
)

// WatchSource registers the source's connection state: connected (1 while
// the source is up, 0 while it reconnects after losing its connection)
// and reconnects (attempts since start). Both are read at scrape time.
func (m *Pipeline) WatchSource(connected func() bool, reconnects func() int64) {
	if m == nil {
		return
	}
	l := Labels{"pipeline", m.name}
	m.reg.GaugeFunc(sourceConnectedName,
		"1 while the source database connection is up, 0 while the source is reconnecting after losing it (or has not connected yet).",
		l, func() float64 {
			if connected() {
				return 1
			}
			return 0
		})
	m.reg.CounterFunc(sourceReconnectsName,
		"Attempts to reconnect to the source database after a retriable connection loss.",
		l, func() float64 { return float64(reconnects()) })
}

// sourceResnapshotsName counts the fresh starts of source.snapshot_mode
// when_needed.
const sourceResnapshotsName = "tributary_source_resnapshots_total"

// WatchResnapshots registers the count of times the source lost its
// position and started again from a new one with a backfill of every
// table (source.snapshot_mode when_needed), read at scrape time.
func (m *Pipeline) WatchResnapshots(resnapshots func() int64) {
	if m == nil {
		return
	}
	m.reg.CounterFunc(sourceResnapshotsName,
		"Times the source position was lost and the source started again from a new position, backfilling every table (source.snapshot_mode when_needed).",
		Labels{"pipeline", m.name}, func() float64 { return float64(resnapshots()) })
}
