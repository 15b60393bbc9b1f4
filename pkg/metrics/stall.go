package metrics

import "sync/atomic"

// Names of the Kafka stall metrics.
const (
	kafkaStalledName = "tributary_kafka_stalled"
	kafkaStallsName  = "tributary_kafka_stall_retries_total"
)

// stall holds whether the pipeline waits for the cluster to accept writes.
type stall struct {
	registered atomic.Bool
	on         atomic.Bool
	retries    atomic.Int64
}

func (m *Pipeline) registerStall() {
	if m.stall.registered.Swap(true) {
		return
	}
	l := Labels{"pipeline", m.name}
	m.reg.GaugeFunc(kafkaStalledName,
		"1 while the Kafka cluster acknowledges nothing the pipeline sent (too few in-sync replicas, no reachable leader) and the pipeline waits and retries instead of exiting; 0 once writes are acknowledged again.",
		l, func() float64 {
			if m.stall.on.Load() {
				return 1
			}
			return 0
		})
	m.reg.CounterFunc(kafkaStallsName,
		"Retries from the checkpoint after the Kafka cluster could not accept writes (each after the producer's attempts ran out).",
		l, func() float64 { return float64(m.stall.retries.Load()) })
}

// KafkaStalled sets whether the pipeline is stalled on a cluster that
// cannot accept writes right now (two brokers down, no leader: see
// kafka.IsStall). Both series exist from the first call on.
func (m *Pipeline) KafkaStalled(on bool) {
	if m == nil {
		return
	}
	m.registerStall()
	m.stall.on.Store(on)
}

// KafkaStallRetry counts one retry from the checkpoint during a stall, and
// sets the stall.
func (m *Pipeline) KafkaStallRetry() {
	if m == nil {
		return
	}
	m.KafkaStalled(true)
	m.stall.retries.Add(1)
}

// KafkaStalledNow reports whether the pipeline is stalled on Kafka.
func (m *Pipeline) KafkaStalledNow() bool { return m != nil && m.stall.on.Load() }

// InFlight is how many c/u/d records were handed to the producer and are
// not settled yet.
func (m *Pipeline) InFlight() int64 {
	if m == nil {
		return 0
	}
	return m.inflight.Load()
}
