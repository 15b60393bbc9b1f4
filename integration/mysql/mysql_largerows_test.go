package mysql_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMySQLLargeRowsNotHeld: thirty 8 MB rows streamed one after another,
// each followed by a small row of another table, are not all held in
// memory at once. Each large row's values alias the binlog event they
// were read from, and the events and rows are cut from slabs of 256; the
// slabs later events were cut from kept every large event before them in
// memory (265 MB resident at the end under go-mysql's syncer, 368 MB when
// the stream's own blocks grew to twice such an event and took the next
// events too). Now a large event is copied out at its size and the slabs
// are released after it (pkg/source/mysql/binlog.go, snapshot.Slabs):
// 74 MB resident, 107 MB at the peak.
func TestMySQLLargeRowsNotHeld(t *testing.T) {
	e := itest.NewMyEnv(t, "mylarge")
	e.Exec("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)")
	e.Exec("CREATE TABLE small (id INT PRIMARY KEY)")
	p := e.Start("run", "--config", e.WriteConfig(""))
	small := e.Prefix + "." + e.DB + ".small"
	e.Exec("INSERT INTO small VALUES (0)")
	itest.WaitFor(t, 60*time.Second, "the stream", func() bool { return itest.TopicEnd(small) >= 1 })
	const rows = 30
	for i := 1; i <= rows; i++ {
		e.Exec(fmt.Sprintf("INSERT INTO big VALUES (%d, REPEAT('x', 8000000))", i))
		e.Exec(fmt.Sprintf("INSERT INTO small VALUES (%d)", i))
	}
	itest.WaitFor(t, 120*time.Second, "every small row", func() bool { return itest.TopicEnd(small) >= rows+1 })
	status, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			t.Logf("peak resident memory %d MB after %d rows of 8 MB", kb>>10, rows)
			if kb>>10 > 200 && !itest.RaceBuilt {
				t.Errorf("peak resident memory %d MB after %d rows of 8 MB streamed one at a time, want at most 200 MB: the large rows are held", kb>>10, rows)
			}
		}
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
}
