package pipeline

import (
	"errors"
	"fmt"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// rowPartition is the partition destination.partition_column chose for
// the row being emitted (source goroutine only); produce hands it to the
// producer, which refuses one the topic does not have
// (kafka.PartitionRangeError).
type rowPartition struct {
	value  int64
	set    bool
	column string
}

// choosePartition sets p.partition for ev from its table's partition
// column, when one is configured. A value that cannot name a partition
// (null, negative) returns the reason to skip the row; a column the table
// does not have, or one that is not a signed integer, stops the pipeline
// naming it.
func (p *Pipeline) choosePartition(ev *change.Event) (skipReason string, err error) {
	p.partition = rowPartition{}
	if len(p.PartitionColumns) == 0 {
		return "", nil // spares naming the table for each event
	}
	col, ok := p.PartitionColumns[ev.Table.ID.String()]
	if !ok {
		return "", nil
	}
	if p.partitionIdx == nil {
		p.partitionIdx = map[*change.Table]int{}
	}
	idx, known := p.partitionIdx[ev.Table]
	if !known {
		idx = -1
		for i := range ev.Table.Columns {
			if ev.Table.Columns[i].Name == col {
				idx = i
			}
		}
		if idx < 0 {
			return "", fmt.Errorf("destination.partition_column names column %s, which table %s does not have", col, ev.Table.ID)
		}
		switch ev.Table.Columns[idx].Type.Kind {
		case change.KindInt16, change.KindInt32, change.KindInt64:
		default:
			return "", fmt.Errorf("destination.partition_column: column %s of table %s is not a signed integer column", col, ev.Table.ID)
		}
		p.partitionIdx[ev.Table] = idx
	}
	row := ev.After
	if row == nil {
		row = ev.Before
	}
	if idx >= len(row) || row[idx].Kind != change.Int {
		return fmt.Sprintf("partition_column %s is null", col), nil
	}
	v := row[idx].Int
	if v < 0 {
		return fmt.Sprintf("partition_column %s is negative (%d)", col, v), nil
	}
	p.partition = rowPartition{value: v, set: true, column: col}
	return "", nil
}

// refusedReason is the row.skipped reason of a record the producer refused
// before handing it over: too large, or (partition_column) a partition the
// topic does not have.
func (p *Pipeline) refusedReason(refused error) string {
	var part *kafka.PartitionRangeError
	if errors.As(refused, &part) {
		return fmt.Sprintf("partition_column %s is %d, out of range: topic %s has %d partitions", p.partition.column, part.Partition, part.Topic, part.Partitions)
	}
	return refused.Error()
}
