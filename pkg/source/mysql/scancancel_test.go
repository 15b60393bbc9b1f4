package mysql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// A snapshot's read of a table without a primary key (one scan, read on
// chunk after chunk) ends promptly when its context does: a stop, a
// reconnect, another worker's failure. Closing the scan's connection while
// its goroutine still read rows raced with that read (go-mysql's Close
// resets the packet sequence the read writes; `make race` runs this test
// under the race detector). Needs the MariaDB of `make services-up`.
func TestKeylessScanCanceledMidRead(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the MariaDB of `make services-up`")
	}
	admin, err := client.Connect("127.0.0.1:3306", "root", "root", "")
	if err != nil {
		t.Skipf("no MariaDB on 127.0.0.1:3306 (make services-up): %v", err)
	}
	defer admin.Close()
	db := fmt.Sprintf("myunit_%d_%04d", os.Getpid()%100000, rand.IntN(10000))
	if _, err := admin.Execute("CREATE DATABASE " + db); err != nil {
		t.Fatal(err)
	}
	defer admin.Execute("DROP DATABASE IF EXISTS " + db)
	for _, q := range []string{
		"SET SESSION sql_log_bin = 0", // rows for the scan only, not for the binlog's readers
		"USE " + db,
		"CREATE TABLE kl (a INT, b VARCHAR(100))",
		"INSERT INTO kl SELECT seq, REPEAT('x', 80) FROM seq_1_to_200000",
	} {
		if _, err := admin.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := New(context.Background(), source.Options{Pipeline: "scancancel", Config: config.Source{Type: "mysql",
		URL: "mysql://root:root@127.0.0.1:3306/" + db, Tables: []string{db + ".kl"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		sess, err := mySnapshots{s}.Session(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		after := time.Duration(10+i*20) * time.Millisecond
		var canceled time.Time
		timer := time.AfterFunc(after, func() { canceled = time.Now(); cancel() })
		rows, err := sess.ReadChunk(ctx, db+".kl", nil, nil, 1_000_000)
		ended := time.Now()
		timer.Stop()
		if err == nil && len(rows) != 200_000 {
			t.Errorf("canceled after %v: %d rows and no error, want all 200000 or an error", after, len(rows))
		}
		if !canceled.IsZero() && ended.Sub(canceled) > 5*time.Second {
			t.Errorf("canceled after %v: the read returned %v later", after, ended.Sub(canceled))
		}
		if err := sess.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		cancel()
	}
}
