package debezium

import "testing"

// TestHeartbeatRecords: Debezium's heartbeat key and value, as its
// connectors write them with the JsonConverter (the bytes the integration
// tests compare with the real connectors), with and without schemas.
func TestHeartbeatRecords(t *testing.T) {
	for _, c := range []struct {
		schemas    bool
		key, value string
	}{
		{true,
			`{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],"optional":false,"name":"io.debezium.connector.common.ServerNameKey","version":1},"payload":{"serverName":"shop.eu"}}`,
			`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat","version":1},"payload":{"ts_ms":1767225600123}}`},
		{false, `{"serverName":"shop.eu"}`, `{"ts_ms":1767225600123}`},
	} {
		e := NewEncoder(Options{TopicPrefix: "shop.eu", Format: Format{NoSchemas: !c.schemas}})
		if got := string(e.HeartbeatKey("shop.eu")); got != c.key {
			t.Errorf("schemas %v: key\n%s\nwant\n%s", c.schemas, got, c.key)
		}
		if got := string(e.AppendHeartbeatValue([]byte("x"), 1767225600123)); got != "x"+c.value {
			t.Errorf("schemas %v: value\n%s\nwant\nx%s", c.schemas, got, c.value)
		}
	}
}
