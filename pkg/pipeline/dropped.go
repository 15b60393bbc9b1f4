package pipeline

import "github.com/tributary-cdc/tributary/pkg/change"

// reportDropped warns about the columns the encoder leaves out of t's
// messages and sets tributary_columns_dropped, once per table version:
// at the first event of each table after start-up and after every schema
// change (sources make a new *change.Table only then). No column goes
// missing silently.
func (p *Pipeline) reportDropped(t *change.Table) {
	if p.reported == nil {
		p.reported = map[*change.Table]bool{}
	}
	if p.reported[t] {
		return
	}
	p.reported[t] = true
	dropped := p.Encoder.Dropped(t)
	for _, c := range dropped {
		p.Log.Warn("column left out of messages: Tributary cannot encode its type (set source.include_unknown_types to publish it as text)",
			"table", t.ID.String(), "column", c.Name, "type", c.Type.Name)
	}
	p.Metrics.ColumnsDropped(t.ID.String(), len(dropped))
}
