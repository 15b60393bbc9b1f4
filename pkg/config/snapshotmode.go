package config

// source.snapshot_mode: Debezium's snapshot.mode names (docs/snapshots.md,
// "Snapshot modes").
const (
	// SnapshotInitial backfills every table on the first start, then
	// streams; a restart resumes from its checkpoint. The default.
	SnapshotInitial = "initial"
	// SnapshotInitialOnly backfills every table, then stops (exit 0); a
	// later run with the finished checkpoint stops at once.
	SnapshotInitialOnly = "initial_only"
	// SnapshotNoData streams only: existing rows are not published.
	SnapshotNoData = "no_data"
	// SnapshotNever is Debezium's older name of no_data.
	SnapshotNever = "never"
	// SnapshotWhenNeeded is initial, and backfills again from a new
	// position when the checkpoint's position is lost (a dropped or
	// invalidated slot, a purged binlog) instead of stopping with
	// "resnapshot required".
	SnapshotWhenNeeded = "when_needed"
)

// Snapshot is the snapshot mode in effect: source.snapshot_mode with never
// read as no_data, and, when unset, no_data if source.backfill is false,
// else initial.
func (s Source) Snapshot() string {
	switch s.SnapshotMode {
	case "":
		if s.Backfill != nil && !*s.Backfill {
			return SnapshotNoData
		}
		return SnapshotInitial
	case SnapshotNever:
		return SnapshotNoData
	}
	return s.SnapshotMode
}

func (v validator) snapshotMode(s *Source) {
	switch s.SnapshotMode {
	case "", SnapshotInitial, SnapshotInitialOnly, SnapshotNoData, SnapshotNever, SnapshotWhenNeeded:
	default:
		v.add("source.snapshot_mode", "must be initial, initial_only, no_data (or never), or when_needed, not %s", v.quote("source.snapshot_mode", s.SnapshotMode))
		return
	}
	if s.Backfill != nil && !*s.Backfill && s.Snapshot() != SnapshotNoData {
		v.add("source.snapshot_mode", "%s backfills, but source.backfill is false; remove source.backfill (snapshot_mode no_data is what backfill: false means)", s.SnapshotMode)
	}
}
