package mysql

import (
	"context"
	"fmt"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

var _ source.Lagger = (*Source)(nil)

// LagBytes implements source.Lagger: binlog bytes from the checkpoint's
// file and offset to the end of the server's last binlog file, summed over
// the files in between (SHOW BINARY LOGS).
func (s *Source) LagBytes(ctx context.Context, pos []byte) (int64, error) {
	p, err := decodePosition(change.Position(pos))
	if err != nil {
		return 0, err
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return 0, fmt.Errorf("list binary logs: %w", err)
	}
	var lag int64
	counting := false
	for i := range r.Values {
		name, _ := r.GetString(i, 0)
		size, _ := r.GetInt(i, 1)
		switch {
		case name == p.File:
			counting = true
			lag += max(size-int64(p.Pos), 0)
		case counting:
			lag += size
		}
	}
	if !counting {
		return 0, fmt.Errorf("binlog file %s of the checkpoint is no longer on the server", p.File)
	}
	return lag, nil
}
