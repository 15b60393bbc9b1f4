package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/change"
)

var ctx = context.Background()

func open(t *testing.T, dir, pipeline string) *File {
	t.Helper()
	f, err := OpenFile(dir, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFileRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "nested")
	f := open(t, dir, "shop")
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("dir: %v %v", info, err)
	}

	if _, found, err := f.Load(ctx); err != nil || found {
		t.Fatalf("empty store: found %v, err %v", found, err)
	}

	at := time.Date(2025, 3, 1, 12, 30, 0, 123456789, time.UTC)
	pos := change.Position(`{"lsn":"0/16B3748","tx":7,"note":"<&>"}`)
	if err := f.Save(ctx, Checkpoint{Pipeline: "shop", Position: pos, UpdatedAt: at, Delivery: DeliveryAtLeastOnce}); err != nil {
		t.Fatal(err)
	}
	cp, found, err := f.Load(ctx)
	if err != nil || !found {
		t.Fatalf("load: found %v, err %v", found, err)
	}
	if cp.Pipeline != "shop" || !bytes.Equal(cp.Position, pos) || !cp.UpdatedAt.Equal(at) || cp.Delivery != DeliveryAtLeastOnce {
		t.Fatalf("got %+v (position %s)", cp, cp.Position)
	}

	// The position is stored as JSON, readable, not base64.
	raw, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"lsn": "0/16B3748"`)) || !bytes.Contains(raw, []byte(`"<&>"`)) {
		t.Fatalf("position not stored as JSON:\n%s", raw)
	}

	// It survives closing and reopening.
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g := open(t, dir, "shop")
	cp, found, err = g.Load(ctx)
	if err != nil || !found || !bytes.Equal(cp.Position, pos) {
		t.Fatalf("after reopen: %+v %v %v", cp, found, err)
	}

	// An empty pipeline and a zero time are filled in; a nil position
	// stays nil.
	before := time.Now()
	if err := g.Save(ctx, Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	cp, _, err = g.Load(ctx)
	if err != nil || cp.Pipeline != "shop" || cp.Position != nil || cp.UpdatedAt.Before(before.Add(-time.Second)) {
		t.Fatalf("defaults: %+v %v", cp, err)
	}
}

func TestFileSaveRejects(t *testing.T) {
	f := open(t, t.TempDir(), "shop")
	if err := f.Save(ctx, Checkpoint{Pipeline: "other"}); err == nil {
		t.Error("saved another pipeline's checkpoint")
	}
	if err := f.Save(ctx, Checkpoint{Position: change.Position("not json")}); err == nil {
		t.Error("saved a position that is not JSON")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.Save(cancelled, Checkpoint{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled save: %v", err)
	}
	if _, found, _ := f.Load(ctx); found {
		t.Error("a rejected save wrote something")
	}
}

func TestOpenFileRejectsPipelineNames(t *testing.T) {
	for _, name := range []string{"", "../x", "a/b", ".hidden", "a*"} {
		if f, err := OpenFile(t.TempDir(), name); err == nil {
			f.Close()
			t.Errorf("%q accepted", name)
		}
	}
}

func TestFileSaveLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	// A temporary file left by a crash is removed when the store opens.
	if err := os.WriteFile(filepath.Join(dir, "shop.checkpoint.json.tmp-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := open(t, dir, "shop")
	for i := 0; i < 20; i++ {
		if err := f.Save(ctx, Checkpoint{Position: change.Position(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if got := list(t, dir); strings.Join(got, " ") != "shop.checkpoint.json shop.lock" {
		t.Fatalf("dir holds %v", got)
	}
	cp, _, err := f.Load(ctx)
	if err != nil || string(cp.Position) != "19" {
		t.Fatalf("last save: %s %v", cp.Position, err)
	}
	info, err := os.Stat(f.Path())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint file mode: %v %v", info, err)
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestFileLockExclusive(t *testing.T) {
	dir := t.TempDir()
	open(t, dir, "shop")

	// Same process, same pipeline: flock is per open file, so it conflicts.
	second, err := OpenFile(dir, "shop")
	if err == nil {
		second.Close()
		t.Fatal("second OpenFile succeeded")
	}
	lockPath := filepath.Join(dir, "shop.lock")
	if !errors.Is(err, ErrOwned) || !strings.Contains(err.Error(), lockPath) {
		t.Fatalf("error %q should wrap ErrOwned and name %s", err, lockPath)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q should name the holder", err)
	}

	// Other pipelines in the same directory are independent.
	open(t, dir, "shop-2")
}

func TestFileLockReleasedOnClose(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Owned(); err != nil {
		t.Fatalf("Owned while open: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Owned(); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Owned after Close = %v, want ErrLeaseLost", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := f.Save(ctx, Checkpoint{}); err == nil {
		t.Error("Save after Close succeeded")
	}
	if _, _, err := f.Load(ctx); err == nil {
		t.Error("Load after Close succeeded")
	}
	open(t, dir, "shop")
}

func TestFileCorrupt(t *testing.T) {
	good := `{"version":1,"pipeline":"shop","position":{"lsn":1},"updated_at":"2025-03-01T12:00:00Z"}`
	for name, content := range map[string]string{
		"empty":          "",
		"garbage":        "\x00\x01garbage",
		"truncated":      good[:40],
		"not an object":  `[1,2]`,
		"trailing data":  good + `{}`,
		"other pipeline": strings.Replace(good, `"shop"`, `"other"`, 1),
		"future version": strings.Replace(good, `"version":1`, `"version":2`, 1),
		"no version":     strings.Replace(good, `"version":1,`, ``, 1),
		"huge":           `{"version":1,"pipeline":"shop","position":"` + strings.Repeat("x", maxFileBytes) + `"}`,
		"bad time":       strings.Replace(good, `2025-03-01T12:00:00Z`, `yesterday`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := open(t, dir, "shop")
			if err := os.WriteFile(f.Path(), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			cp, found, err := f.Load(ctx)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), f.Path()) || found {
				t.Fatalf("got %+v %v %v; want ErrCorrupt naming %s", cp, found, err, f.Path())
			}
		})
	}

	// The good document itself loads, and trailing whitespace is fine.
	f := open(t, t.TempDir(), "shop")
	if err := os.WriteFile(f.Path(), []byte(good+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cp, found, err := f.Load(ctx); err != nil || !found || string(cp.Position) != `{"lsn":1}` {
		t.Fatalf("good file: %+v %v %v", cp, found, err)
	}
}

// crashChildEnv makes the test binary a child that saves in a loop until
// it is killed.
const crashChildEnv = "TRIBUTARY_CHECKPOINT_CRASH_CHILD"

// TestFileCrashSafety kills a process that saves checkpoints as fast as it
// can, at varying moments, and checks that the file always parses and
// holds the last save that returned, or the one in flight.
func TestFileCrashSafety(t *testing.T) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		crashChild(spec)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	for round := 0; round < 6; round++ {
		base := round * 1_000_000
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileCrashSafety$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d", crashChildEnv, dir, base))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a different number of saves each round, and a little
		// later than a line boundary, so some kills land mid-Save.
		killAfter := 1 + round*40
		lines := bufio.NewScanner(out)
		last := 0
		for lines.Scan() {
			n, err := strconv.Atoi(lines.Text())
			if err != nil {
				continue
			}
			last = n
			if n-base >= killAfter {
				time.Sleep(time.Duration(round*150) * time.Microsecond)
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		for lines.Scan() { // saves that returned before the kill landed
			if n, err := strconv.Atoi(lines.Text()); err == nil {
				last = n
			}
		}
		cmd.Wait()
		if last-base < killAfter {
			t.Fatalf("round %d: child stopped after %d saves:\n%s", round, last-base, stderr.String())
		}

		// The kernel dropped the dead child's lock.
		f, err := OpenFile(dir, "crash")
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		cp, found, err := f.Load(ctx)
		f.Close()
		if err != nil || !found {
			t.Fatalf("round %d: load after kill: %v (found %v)", round, err, found)
		}
		var pos struct{ N int }
		if err := json.Unmarshal(cp.Position, &pos); err != nil {
			t.Fatalf("round %d: position %s: %v", round, cp.Position, err)
		}
		if pos.N != last && pos.N != last+1 {
			t.Fatalf("round %d: file holds save %d; the last returned save was %d", round, pos.N, last)
		}
		if names := list(t, dir); len(names) != 2 {
			t.Fatalf("round %d: dir holds %v after reopen", round, names)
		}
	}
}

func crashChild(spec string) {
	dir, baseText, _ := strings.Cut(spec, "|")
	base, _ := strconv.Atoi(baseText)
	f, err := OpenFile(dir, "crash")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for n := base + 1; ; n++ {
		pos := change.Position(fmt.Sprintf(`{"n":%d,"pad":%q}`, n, strings.Repeat("x", n%3000)))
		if err := f.Save(ctx, Checkpoint{Position: pos}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(n) + "\n")
	}
}

// FuzzDecodeFile feeds the checkpoint decoder arbitrary file contents (a
// file on disk can hold anything). It must not panic, and what it accepts
// must survive another save and load unchanged.
func FuzzDecodeFile(f *testing.F) {
	seed, err := encodeFile(Checkpoint{
		Pipeline:  "shop",
		Position:  change.Position(`{"lsn":"0/16B3748","gtid":"3E11FA47-71CA-11E1-9E33-C80AA9429562:23"}`),
		UpdatedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
	}, "shop")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"version":1,"pipeline":"shop","position":null,"updated_at":"2025-03-01T12:00:00+01:00"}`))
	f.Add([]byte(`{"version":1,"pipeline":"shop","position":[1,"\u00e9",{"a":1e400}],"updated_at":"0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"version":1,"pipeline":"shop"}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, err := decodeFile(data, "shop")
		if err != nil {
			return
		}
		again, err := encodeFile(cp, "shop")
		if err != nil {
			t.Fatalf("decoded %+v but cannot encode it: %v", cp, err)
		}
		back, err := decodeFile(again, "shop")
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, again)
		}
		if back.Pipeline != cp.Pipeline || !bytes.Equal(back.Position, cp.Position) || !back.UpdatedAt.Equal(cp.UpdatedAt) {
			t.Fatalf("round trip changed %+v into %+v", cp, back)
		}
	})
}

// The pipeline asks Owned before every event and every write to a broker;
// a Save holds the store through its writes and fsyncs, which take
// milliseconds to seconds on a busy disk. Owned must not wait for it.
func TestFileOwnedDuringSave(t *testing.T) {
	f := open(t, t.TempDir(), "shop")
	f.mu.Lock() // as Save holds it while it writes and syncs
	defer f.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- f.Owned() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Owned: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Owned waited for a Save in progress")
	}
}
