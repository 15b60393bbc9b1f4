package metrics

import (
	"sync"
	"sync/atomic"
)

// Names of the missing-topic metrics.
const (
	topicMissingName = "tributary_topic_missing"
	// EMFTopicsMissing is how many topics the pipeline waits for (EMF,
	// dimension Pipeline); the TopicMissing alarm watches it.
	EMFTopicsMissing = "TopicsMissing"
)

// topics holds the tributary_topic_missing gauges of one pipeline.
type topics struct {
	mu      sync.Mutex
	by      map[string]*atomic.Bool
	missing atomic.Int64
}

// TopicMissing sets whether the pipeline is waiting for topic to be
// created (it does not exist, destination.create_missing_topics is false
// and the cluster does not create topics automatically): the gauge reads 1
// while it waits and 0 once the topic exists. A topic that never was
// missing has no series.
func (m *Pipeline) TopicMissing(topic string, missing bool) {
	if m == nil {
		return
	}
	m.topics.mu.Lock()
	defer m.topics.mu.Unlock()
	g := m.topics.by[topic]
	if g == nil {
		if !missing {
			return
		}
		if m.topics.by == nil {
			m.topics.by = map[string]*atomic.Bool{}
		}
		g = &atomic.Bool{}
		m.topics.by[topic] = g
		m.reg.GaugeFunc(topicMissingName,
			"1 while the pipeline waits for the topic to be created (it does not exist, destination.create_missing_topics is false and the cluster does not create topics automatically); nothing after the row waiting for it is published meanwhile.",
			Labels{"pipeline", m.name, "topic", topic}, func() float64 {
				if g.Load() {
					return 1
				}
				return 0
			})
	}
	if g.Swap(missing) != missing {
		if missing {
			m.topics.missing.Add(1)
		} else {
			m.topics.missing.Add(-1)
		}
	}
}

// TopicsMissing is how many topics the pipeline waits for now.
func (m *Pipeline) TopicsMissing() int64 {
	if m == nil {
		return 0
	}
	return m.topics.missing.Load()
}
