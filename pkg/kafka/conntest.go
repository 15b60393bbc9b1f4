package kafka

// Report is the result of a connection test: the same shape from the CLI
// (--json), the connection-test Lambda and the task's start-up check.
type Report struct {
	OK      bool           `json:"ok"`
	Brokers []BrokerResult `json:"brokers"`
	Checks  []Check        `json:"checks"`
}

// BrokerResult is one broker the cluster advertises.
type BrokerResult struct {
	ID        int32  `json:"id"`
	Host      string `json:"host"`
	Port      int32  `json:"port"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"` // e.g. "broker 2 at b-2.example.com:9096 is unreachable"
}

// Check is one named check (sign-in, metadata, describe/write/create
// permission under the topic prefix).
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}
