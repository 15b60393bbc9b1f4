package mysql

import (
	"errors"
	"strings"
	"testing"
)

// The prerequisite errors name the setting and where to fix it: the
// server configuration, or on RDS / Aurora the parameter group and
// mysql.rds_set_configuration.
func TestPrerequisiteMessages(t *testing.T) {
	good := binlogSettings{logBin: "1", format: "ROW", image: "FULL", serverID: 1, retentionHours: unknownRetention}
	if err := good.problems(); err != nil {
		t.Fatalf("good settings: %v", err)
	}
	for _, tc := range []struct {
		name string
		b    binlogSettings
		want []string
	}{
		{"self-managed", binlogSettings{logBin: "1", format: "MIXED", image: "MINIMAL", serverID: 1, retentionHours: unknownRetention}, []string{
			"binlog_format is MIXED, must be ROW: SET GLOBAL binlog_format = 'ROW' and set binlog_format = ROW in the server configuration",
			"binlog_row_image is MINIMAL, must be FULL: SET GLOBAL binlog_row_image = 'FULL'",
		}},
		{"rds format", binlogSettings{rds: true, logBin: "1", format: "MIXED", image: "FULL", serverID: 1, retentionHours: 72}, []string{
			"binlog_format is MIXED, must be ROW: set binlog_format = ROW in the DB parameter group (DB cluster parameter group on Aurora) of the instance; RDS does not allow SET GLOBAL",
		}},
		{"rds binlog off", binlogSettings{rds: true, logBin: "0", format: "ROW", image: "FULL", serverID: 1, retentionHours: 72}, []string{
			"log_bin is OFF: on RDS the binary log is on when automated backups are",
		}},
		{"rds retention unset", binlogSettings{rds: true, logBin: "1", format: "ROW", image: "FULL", serverID: 1, retentionHours: -1}, []string{
			"binlog retention hours is unset (RDS purges binlog as soon as no replica needs it), too short for the pipeline to resume after a stop: CALL mysql.rds_set_configuration('binlog retention hours', 72)",
		}},
		{"rds retention short", binlogSettings{rds: true, logBin: "1", format: "ROW", image: "FULL", serverID: 1, retentionHours: 2}, []string{
			"binlog retention hours is 2 hours, too short",
		}},
	} {
		err := tc.b.problems()
		if !errors.Is(err, ErrPrerequisite) {
			t.Errorf("%s: %v is not a prerequisite error", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%s\ndoes not say\n%s", tc.name, err, w)
			}
		}
	}
	rdsOK := binlogSettings{rds: true, logBin: "1", format: "ROW", image: "FULL", serverID: 1, retentionHours: 24}
	if err := rdsOK.problems(); err != nil {
		t.Errorf("RDS with 24 h retention: %v", err)
	}
}
