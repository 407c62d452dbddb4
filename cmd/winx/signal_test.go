package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopLimit is how soon a stdio winx told to stop must be gone: clients
// escalate to SIGKILL after a couple of seconds.
const stopLimit = 2 * time.Second

// startSignalAdapter runs a built winx (embedded runtime) over stdio whose
// stdin stays open, and returns it with a reader of its stderr lines.
func startSignalAdapter(t *testing.T) (*adapter, <-chan string) {
	t.Helper()
	cmd := exec.Command(buildWinx(t))
	errOut, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := startAdapter(t, cmd)
	logs := make(chan string, 64)
	go func() {
		defer close(logs)
		sc := bufio.NewScanner(errOut)
		for sc.Scan() {
			select {
			case logs <- sc.Text():
			default: // nobody reads the rest
			}
		}
	}()
	t.Cleanup(func() { a.in.Close() }) // before startAdapter's kill
	return a, logs
}

// startSlowCall sends a BashCommand that runs past the signal and returns
// once its shell has started it (the shell opens the FIFO).
func startSlowCall(t *testing.T, a *adapter, s initData, script string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1000, "method": "tools/call",
		"params": map[string]any{"name": "BashCommand", "_meta": json.RawMessage(strings.TrimPrefix(modernMeta, `"_meta":`)),
			"arguments": map[string]any{"action_json": command(": > " + fifo + "; " + script), "wait_for_seconds": 10,
				"thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot}}})
	if _, err := a.in.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fifo) // blocks until the shell opened it
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, f)
	f.Close()
}

// waitExit waits for the process and reports its state and how long it took.
func waitExit(t *testing.T, a *adapter, from time.Time) (*os.ProcessState, time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		a.cmd.Process.Kill()
		<-done
		t.Fatal("winx did not exit within 10s of the signal")
	}
	return a.cmd.ProcessState, time.Since(from)
}

// TestStdioStopsOnSignal sends SIGTERM (the MCP stdio shutdown) or SIGINT
// (Ctrl-C) to a stdio winx whose stdin stays open while a slow call runs:
// the call is answered, and winx exits 0 within stopLimit.
func TestStdioStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			a, _ := startSignalAdapter(t)
			s := a.mustInit(t.TempDir())
			startSlowCall(t, a, s, "sleep 1; echo slept")
			sent := time.Now()
			if err := a.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var answered bool
			deadline := time.After(30 * time.Second)
		read:
			for {
				select {
				case line, ok := <-a.lines:
					if !ok {
						break read // stdout closed: winx is gone
					}
					var m struct {
						ID int `json:"id"`
					}
					if json.Unmarshal([]byte(line), &m) == nil && m.ID == 1000 {
						answered = true
					}
				case <-deadline:
					break read
				}
			}
			st, took := waitExit(t, a, sent)
			if !answered {
				t.Errorf("the call running at the %v was not answered", sig)
			}
			if st.ExitCode() != 0 {
				t.Errorf("winx after %v: %v, want exit 0", sig, st)
			}
			if took > stopLimit {
				t.Errorf("winx took %v to exit after %v, want at most %v", took, sig, stopLimit)
			}
		})
	}
}

// TestStdioSecondSignalExitsAtOnce: a call that would hold the grace period
// does not hold a second signal, which ends winx by its default action.
func TestStdioSecondSignalExitsAtOnce(t *testing.T) {
	a, logs := startSignalAdapter(t)
	s := a.mustInit(t.TempDir())
	startSlowCall(t, a, s, "sleep 60")
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The first signal is handled (and the default action restored) when
	// winx says it is stopping.
	deadline := time.After(30 * time.Second)
wait:
	for {
		select {
		case line, ok := <-logs:
			if !ok {
				t.Fatal("winx closed stderr without saying it is stopping")
			}
			if strings.Contains(line, "stopping on a signal") {
				break wait
			}
		case <-deadline:
			t.Fatal("winx did not say it is stopping within 30s of SIGINT")
		}
	}
	sent := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	st, took := waitExit(t, a, sent)
	ws, _ := st.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("winx after a second SIGINT: %v, want killed by SIGINT", st)
	}
	if took > stopLimit {
		t.Errorf("winx took %v to exit after the second signal, want at most %v", took, stopLimit)
	}
}
