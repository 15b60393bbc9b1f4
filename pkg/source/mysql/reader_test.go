package mysql

import (
	"errors"
	"fmt"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestTakenOverIsNotAPurgedBinlog: MySQL answers a stream whose server_id
// another replica registered with error 1236, the code of a purged binlog;
// it must read as another reader (fatal, worded), not "resnapshot
// required", which would make the user backfill again for nothing.
func TestTakenOverIsNotAPurgedBinlog(t *testing.T) {
	s := &Source{serverID: 7}
	for _, code := range []uint16{gomysql.ER_MASTER_FATAL_ERROR_READING_BINLOG, 4052} {
		raw := &gomysql.MyError{Code: code, Message: "A slave with the same server_uuid/server_id as this slave has connected to the master"}
		err := s.takenOver(classify(fmt.Errorf("binlog stream: %w", raw)))
		if errors.Is(err, source.ErrResnapshotRequired) || !errors.Is(err, source.ErrReaderInUse) || s.Retriable(err) {
			t.Errorf("code %d: %v (resnapshot %v, retriable %v)", code, err, errors.Is(err, source.ErrResnapshotRequired), s.Retriable(err))
		}
	}
	purged := &gomysql.MyError{Code: gomysql.ER_MASTER_FATAL_ERROR_READING_BINLOG, Message: "Could not find first log file name in binary log index file"}
	if err := s.takenOver(classify(purged)); !errors.Is(err, source.ErrResnapshotRequired) {
		t.Errorf("a purged binlog: %v", err)
	}
}
