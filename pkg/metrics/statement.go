package metrics

const statementChangesName = "tributary_statement_changes_total"

// StatementChange counts a change of table logged as a statement's text,
// not rows (MySQL/MariaDB binlog_format = STATEMENT): the table is
// backfilled again, as its changed rows are not in the log.
func (m *Pipeline) StatementChange(table string) {
	if m == nil {
		return
	}
	m.reg.Counter(statementChangesName,
		"Changes of a captured table logged as statements, not rows (MySQL/MariaDB binlog_format = STATEMENT or MIXED); each backfills the table again. Set binlog_format = ROW.",
		Labels{"pipeline", m.name, "table", table}).Add(1)
}
