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
