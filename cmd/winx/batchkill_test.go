package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// send writes a tools/call without waiting for its answer.
func (a *adapter) send(name string, args map[string]any) {
	a.tb.Helper()
	a.id++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": a.id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args, "_meta": json.RawMessage(strings.TrimPrefix(modernMeta, `"_meta":`))}})
	if _, err := a.in.Write(append(req, '\n')); err != nil {
		a.tb.Fatalf("write: %v", err)
	}
}

// TestAdapterKilledMidBatchReplay is the review's kill-mid-batch
// experiment through the built binaries: an adapter is killed at a random
// point of a 40-file EditFiles call, and the identical call from a new
// adapter of the same session finishes the batch (or answers it was
// applied); no run may leave the files mixed. The review saw 4 of 50 runs
// mixed, and the replay answering conflict or needs_initialize.
func TestAdapterKilledMidBatchReplay(t *testing.T) {
	const files = 40
	runs := 50
	if testing.Short() || raceEnabled {
		runs = 10
	}
	d := newDaemonEnv(t)
	t.Cleanup(d.teardown)
	var mixedAtKill, recovered, replayed, mixedAfter int
	deadline := time.Now().Add(150 * time.Second)
	for run := 0; run < runs; run++ {
		if time.Now().After(deadline) {
			if run < 10 {
				t.Fatalf("only %d runs in the time budget", run)
			}
			t.Logf("time budget reached after %d of %d runs", run, runs)
			runs = run
			break
		}
		root := canonDir(t, t.TempDir())
		var paths []string
		for i := range files {
			p := filepath.Join(root, fmt.Sprintf("f%02d.txt", i))
			if err := os.WriteFile(p, []byte(fmt.Sprintf("old %02d\n", i)), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		a := d.adapter()
		s := a.mustInit(root)
		if r := a.tool("ReadFiles", map[string]any{"file_paths": paths, "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot}); r.Status != "completed" {
			t.Fatalf("run %d: ReadFiles = %s %s", run, r.Status, r.Message)
		}
		var entries []any
		for i, p := range paths {
			entries = append(entries, map[string]any{"file_path": p, "mode": "replace", "content": fmt.Sprintf("new %02d\n", i)})
		}
		call := map[string]any{"files": entries, "thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot}
		a.send("EditFiles", call)
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		a.kill()
		state := func() (old, new int) {
			for i, p := range paths {
				b, _ := os.ReadFile(p)
				switch string(b) {
				case fmt.Sprintf("old %02d\n", i):
					old++
				case fmt.Sprintf("new %02d\n", i):
					new++
				default:
					t.Fatalf("run %d: %s is neither version: %q", run, p, b)
				}
			}
			return old, new
		}
		if o, n := state(); o > 0 && n > 0 {
			mixedAtKill++
		}
		b := d.adapter()
		r := b.tool("EditFiles", call)
		switch {
		case r.Status != "completed":
			t.Errorf("run %d: the replay = %s/%s %q", run, r.Status, r.ErrorCode, r.Message)
		case strings.Contains(r.Message, "interrupted batch"):
			recovered++
		case strings.Contains(r.Output, "already applied"):
			replayed++
		}
		if o, n := state(); o != 0 || n != files {
			mixedAfter++
			t.Errorf("run %d: after the replay %d files old, %d new", run, o, n)
		}
		b.kill()
	}
	t.Logf("%d kills of the adapter: %d left the batch mixed, %d replays finished an interrupted batch, %d answered it was already applied, %d mixed after the replay",
		runs, mixedAtKill, recovered, replayed, mixedAfter)
}
