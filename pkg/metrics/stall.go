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

// KafkaStalled sets whether the pipeline is stalled on a cluster that
// cannot accept writes right now (two brokers down, no leader: see
// kafka.IsStall); each call with true counts one retry from the
// checkpoint. Both series exist from the first call on (0 before).
func (m *Pipeline) KafkaStalled(on bool) {
	if m == nil {
		return
	}
	if !m.stall.registered.Swap(true) {
		l := Labels{"pipeline", m.name}
		m.reg.GaugeFunc(kafkaStalledName,
			"1 while the pipeline waits for the Kafka cluster to accept writes again (too few in-sync replicas, no reachable leader) and retries from its checkpoint; 0 once writes are acknowledged again.",
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
	m.stall.on.Store(on)
	if on {
		m.stall.retries.Add(1)
	}
}

// KafkaStalledNow reports whether the pipeline is stalled on Kafka.
func (m *Pipeline) KafkaStalledNow() bool { return m != nil && m.stall.on.Load() }
