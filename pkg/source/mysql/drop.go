package mysql

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Dropper = (*Source)(nil)

// Leftovers implements source.Dropper: the pipeline's rows in the signal
// table (one per snapshot worker, under its server id; snapshot.go). The
// table itself stays: other pipelines may write to it. MySQL keeps no
// per-reader state like a slot, but a running task is registered with the
// server under the pipeline's server_id: a copy running elsewhere (whose
// checkpoint store's lock this drop does not see) is refused by
// checkNoReader.
func (s *Source) Leftovers(ctx context.Context) ([]source.Leftover, error) {
	return s.signalRows(ctx, false)
}

// Drop implements source.Dropper: it deletes the pipeline's signal rows.
func (s *Source) Drop(ctx context.Context) ([]source.Leftover, error) {
	return s.signalRows(ctx, true)
}

func (s *Source) signalRows(ctx context.Context, drop bool) ([]source.Leftover, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := s.checkNoReader(ctx, conn); err != nil {
		return nil, err
	}
	db, name := s.signalTable()
	q := quoteIdent(db) + "." + quoteIdent(name)
	where := " WHERE id LIKE " + quoteString(strconv.FormatUint(uint64(s.serverID), 10)+":%")
	r, err := conn.Execute("SELECT COUNT(*) FROM " + q + where)
	var me *gomysql.MyError
	if errors.As(err, &me) && (me.Code == gomysql.ER_NO_SUCH_TABLE || me.Code == gomysql.ER_BAD_DB_ERROR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count the pipeline's rows in the signal table %s.%s: %w", db, name, err)
	}
	n, _ := r.GetInt(0, 0)
	if n == 0 {
		return nil, nil
	}
	if drop {
		if _, err := conn.Execute("DELETE FROM " + q + where); err != nil {
			return nil, fmt.Errorf("delete the pipeline's rows from the signal table %s.%s: %w (GRANT DELETE ON %s TO <user>)", db, name, err, q)
		}
	}
	return []source.Leftover{{What: "signal table rows", Name: fmt.Sprintf("%d in %s.%s (server id %d)", n, db, name, s.serverID)}}, nil
}
