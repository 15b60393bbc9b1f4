package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ReadFile reads a pipeline's checkpoint from the file store in dir without
// taking the lock, for status displays: it works while the owner runs.
// Save replaces the file by rename, so a reader sees the old checkpoint or
// the new one, whole. found is false when none was ever saved; a missing
// dir is not an error.
func ReadFile(ctx context.Context, dir, pipeline string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	if !validPipeline.MatchString(pipeline) {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: pipeline name %q cannot name a file", pipeline)
	}
	path := filepath.Join(dir, pipeline+".checkpoint.json")
	data, err := readLimited(path)
	if errors.Is(err, os.ErrNotExist) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: %w", err)
	}
	if len(data) > maxFileBytes {
		return Checkpoint{}, false, fmt.Errorf("%w %s: larger than %d MiB", ErrCorrupt, path, maxFileBytes>>20)
	}
	cp, err := decodeFile(data, pipeline)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("%w %s: %v", ErrCorrupt, path, err)
	}
	return cp, true, nil
}

// FileHolder returns the process id recorded in a pipeline's lock file (a
// hint: the flock is the lock), or 0.
func FileHolder(dir, pipeline string) int {
	var pid int
	if b, err := os.ReadFile(filepath.Join(dir, pipeline+".lock")); err == nil {
		fmt.Sscanf(string(b), "%d", &pid)
	}
	return pid
}
