package itest

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/jackc/pglogrepl"
)

// FileCheckpointLSN reads the LSN of the pipeline's file checkpoint (0:
// none yet).
func (e *Env) FileCheckpointLSN() uint64 {
	e.T.Helper()
	b, err := os.ReadFile(filepath.Join(e.Dir, "checkpoints", e.Name+".checkpoint.json"))
	if err != nil {
		return 0
	}
	var f struct {
		Position struct {
			LSN string `json:"lsn"`
		} `json:"position"`
	}
	if json.Unmarshal(b, &f) != nil {
		return 0
	}
	l, _ := pglogrepl.ParseLSN(f.Position.LSN)
	return uint64(l)
}
