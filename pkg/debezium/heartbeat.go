package debezium

import (
	"encoding/json"
	"strconv"
)

// The heartbeat record's Connect schemas, as Debezium's connectors write
// them with the JsonConverter (io.debezium.heartbeat): the key names the
// logical server, the value carries the time the beat was sent.
const (
	heartbeatKeySchema   = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],"optional":false,"name":"io.debezium.connector.common.ServerNameKey","version":1}`
	heartbeatValueSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,"name":"io.debezium.connector.common.Heartbeat","version":1}`
)

// HeartbeatKey is the key of every heartbeat record of the logical server
// serverName (topic.prefix): {"serverName": …}, inside the schema envelope
// unless schemas are off (format.schemas: false).
func (e *Encoder) HeartbeatKey(serverName string) []byte {
	name, _ := json.Marshal(serverName) // a string always marshals
	payload := `{"serverName":` + string(name) + `}`
	if !e.SchemasEnabled() {
		return []byte(payload)
	}
	return []byte(`{"schema":` + heartbeatKeySchema + `,"payload":` + payload + `}`)
}

// AppendHeartbeatValue appends the value of a heartbeat sent at tsMs
// (milliseconds since the epoch): {"ts_ms": …}.
func (e *Encoder) AppendHeartbeatValue(buf []byte, tsMs int64) []byte {
	if e.SchemasEnabled() {
		buf = append(buf, `{"schema":`+heartbeatValueSchema+`,"payload":`...)
	}
	buf = append(buf, `{"ts_ms":`...)
	buf = strconv.AppendInt(buf, tsMs, 10)
	buf = append(buf, '}')
	if e.SchemasEnabled() {
		buf = append(buf, '}')
	}
	return buf
}
