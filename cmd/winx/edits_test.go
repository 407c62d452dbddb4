package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// muxClient drives one winx stdio process with many calls in flight,
// routing each answer to its caller by id.
type muxClient struct {
	t    *testing.T
	cmd  *exec.Cmd
	mu   sync.Mutex // guards in and wait
	in   io.WriteCloser
	wait map[int64]chan json.RawMessage
	next atomic.Int64
}

// startMux starts the built winx over stdio with env added to the test's
// environment.
func startMux(t *testing.T, env ...string) *muxClient {
	t.Helper()
	cmd := exec.Command(buildWinx(t))
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &muxClient{t: t, cmd: cmd, in: in, wait: make(map[int64]chan json.RawMessage)}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var m struct {
					ID *int64 `json:"id"`
				}
				if json.Unmarshal(line, &m) == nil && m.ID != nil {
					c.mu.Lock()
					ch := c.wait[*m.ID]
					delete(c.wait, *m.ID)
					c.mu.Unlock()
					if ch != nil {
						ch <- json.RawMessage(line)
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

// stop closes stdin and waits for the process to exit.
func (c *muxClient) stop() {
	c.mu.Lock()
	c.in.Close()
	c.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-done
		c.t.Errorf("winx did not exit after stdin closed")
	}
}

// call runs one tool call in the stateless era and returns its envelope.
func (c *muxClient) call(tool string, args map[string]any) *toolAnswer {
	id := c.next.Add(1)
	ch := make(chan json.RawMessage, 1)
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,%s}`, id, modernMeta, strings.TrimPrefix(string(params), "{"))
	c.mu.Lock()
	c.wait[id] = ch
	_, err := io.WriteString(c.in, line+"\n")
	c.mu.Unlock()
	if err != nil {
		return &toolAnswer{Status: "write_error", Message: err.Error()}
	}
	select {
	case body := <-ch:
		var r struct {
			Error  *struct{ Message string } `json:"error"`
			Result struct {
				StructuredContent toolAnswer `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return &toolAnswer{Status: "undecodable", Message: string(body)}
		}
		a := &r.Result.StructuredContent
		if r.Error != nil {
			a.Status, a.Message = "rpc_error", r.Error.Message
		}
		a.raw = string(body)
		return a
	case <-time.After(60 * time.Second):
		return &toolAnswer{Status: "timeout"}
	}
}

// TestEditsTwoAdaptersNoLostUpdate: two adapter processes on one
// workspace, each having read the file, send 20 parallel search_replace
// edits on distinct lines, 50 times. Every edit answered completed must be
// in the final file; every other answer must be conflict or needs_read.
func TestEditsTwoAdaptersNoLostUpdate(t *testing.T) {
	ws := canonDir(t, t.TempDir())
	target := filepath.Join(ws, "f.txt")
	const lines = 20
	base := func() string {
		var b strings.Builder
		for i := range lines {
			fmt.Fprintf(&b, "L%02d base\n", i)
		}
		return b.String()
	}()
	if err := os.WriteFile(target, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	adapters := []*muxClient{startMux(t), startMux(t)}
	threads := []string{"edA", "edB"}
	for i, a := range adapters {
		if r := a.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": threads[i]}); r.Status != "completed" {
			t.Fatalf("Initialize = %s", r.raw)
		}
	}
	lost, odd, landed := 0, 0, 0
	const rounds = 50
	deadline := time.Now().Add(3 * time.Minute) // a generous bound on a loaded machine
	for round := range rounds {
		if time.Now().After(deadline) {
			t.Fatalf("round %d: out of time", round)
		}
		if err := os.WriteFile(target, []byte(base), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, a := range adapters {
			if r := a.call("ReadFiles", map[string]any{"file_paths": []string{target}, "thread_id": threads[i], "workspace_root": ws}); r.Status != "completed" {
				t.Fatalf("ReadFiles = %s", r.raw)
			}
		}
		type outcome struct {
			want string
			ans  *toolAnswer
		}
		out := make([]outcome, lines)
		var wg sync.WaitGroup
		for line := range lines {
			ad := line % 2
			want := fmt.Sprintf("L%02d round %d by %s", line, round, threads[ad])
			content := fmt.Sprintf("<<<<<<< SEARCH\nL%02d base\n=======\n%s\n>>>>>>> REPLACE\n", line, want)
			wg.Go(func() {
				out[line] = outcome{want, adapters[ad].call("EditFiles", map[string]any{
					"files":     []map[string]any{{"file_path": target, "mode": "search_replace", "content": content}},
					"thread_id": threads[ad], "workspace_root": ws})}
			})
		}
		wg.Wait()
		final, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			switch o.ans.Status {
			case "completed":
				landed++
				if !strings.Contains(string(final), o.want+"\n") {
					lost++
					t.Errorf("round %d: %q answered completed but is not in the file", round, o.want)
				}
			case "conflict", "needs_read":
			default:
				odd++
				if odd < 5 {
					t.Errorf("round %d: %q answered %s/%s: %s", round, o.want, o.ans.Status, o.ans.ErrorCode, o.ans.Message)
				}
			}
		}
	}
	if lost > 0 || odd > 0 {
		t.Errorf("%d lost updates, %d answers neither completed, conflict nor needs_read", lost, odd)
	}
	// The first commit of each round starts from the revision both read,
	// so at least one edit per round lands: the test is not passed by
	// refusing everything.
	if landed < rounds {
		t.Errorf("%d edits landed in %d rounds, want at least one per round", landed, rounds)
	}
	t.Logf("%d of %d edits landed", landed, rounds*lines)
}

// TestEditsLedgerSurvivesAdapterRestart: a file read through one adapter
// process can be line_patched at its unchanged revision through the next
// adapter process of the same session, without a second read.
func TestEditsLedgerSurvivesAdapterRestart(t *testing.T) {
	ws := canonDir(t, t.TempDir())
	target := filepath.Join(ws, "r.txt")
	if err := os.WriteFile(target, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := startMux(t)
	if r := first.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "restart1"}); r.Status != "completed" {
		t.Fatalf("Initialize = %s", r.raw)
	}
	r := first.call("ReadFiles", map[string]any{"file_paths": []string{target}, "thread_id": "restart1", "workspace_root": ws})
	if r.Status != "completed" {
		t.Fatalf("ReadFiles = %s", r.raw)
	}
	rev := ""
	if files, _ := r.Data["files"].([]any); len(files) == 1 {
		f, _ := files[0].(map[string]any)
		rev, _ = f["revision"].(string)
	}
	if rev == "" {
		t.Fatalf("no revision in %s", r.raw)
	}
	first.stop()
	// The ledger is a private state file.
	var found []string
	filepath.WalkDir(os.Getenv("XDG_STATE_HOME"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) == "ledgers" {
			found = append(found, p)
			fi, _ := os.Stat(p)
			di, _ := os.Stat(filepath.Dir(p))
			if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
				t.Errorf("ledger %s is %v in a %v directory, want 0600 in 0700", p, fi.Mode().Perm(), di.Mode().Perm())
			}
		}
		return nil
	})
	if len(found) == 0 {
		t.Errorf("no ledger file under the state directory")
	}

	second := startMux(t)
	if r := second.call("Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "restart1"}); r.Status != "completed" {
		t.Fatalf("Initialize = %s", r.raw)
	}
	r = second.call("EditFiles", map[string]any{"files": []map[string]any{{"file_path": target, "mode": "line_patch", "expected_revision": rev,
		"patches": []map[string]any{{"start_line": 2, "delete_lines": 1, "replacement": "TWO\n"}}}}, "thread_id": "restart1", "workspace_root": ws})
	if r.Status != "completed" {
		t.Fatalf("line_patch after an adapter restart = %s/%s %q, want completed without a re-read", r.Status, r.ErrorCode, r.Message)
	}
	if b, _ := os.ReadFile(target); string(b) != "one\nTWO\nthree\n" {
		t.Errorf("file = %q", b)
	}
}
