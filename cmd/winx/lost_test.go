package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lostCommand is the command the lost-session tests leave running: it
// prints 500 lines, then holds the terminal.
const lostCommand = "seq 1 500; sleep 100"

// lostInit is the part of an answer about a lost session the tests read.
type lostInit struct {
	ShellPID   int  `json:"shell_pid"`
	Reattached bool `json:"reattached"`
	Lost       *struct {
		Command      string   `json:"command"`
		Running      bool     `json:"command_running"`
		Journal      string   `json:"journal"`
		JournalLines int      `json:"journal_lines"`
		LastLines    []string `json:"last_lines"`
	} `json:"lost"`
}

// startLost runs lostCommand in s with a short wait, waits until its
// output is on disk (the journal or the screen sidecar of the guardian's
// private directory holds the last line), and returns the guardian's pid.
func startLost(t *testing.T, d *daemonEnv, a *adapter, s initData) int {
	t.Helper()
	if r := a.bash(s, command(lostCommand), 0.5); r.Status != "running" {
		t.Fatalf("%s after 0.5 s = %s/%s %q, want running", lostCommand, r.Status, r.ErrorCode, r.Message)
	}
	pid := 0
	for _, e := range d.list() {
		if e.Workspace == s.WorkspaceRoot {
			pid = e.PID
		}
	}
	if pid == 0 {
		t.Fatalf("no guardian of %s in winx list", s.WorkspaceRoot)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !outputOnDisk(d, "500") {
		if time.Now().After(deadline) {
			t.Fatal("the command's output did not reach the disk")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return pid
}

// outputOnDisk reports whether a screen sidecar or journal of a session in
// d's state directory holds the line want.
func outputOnDisk(d *daemonEnv, want string) bool {
	files, _ := filepath.Glob(filepath.Join(d.state, "winx", "sessions", "winx-shell-*", "output-*.txt*"))
	for _, f := range files {
		if b, err := readFileString(f); err == nil && strings.Contains("\n"+b, "\n"+want+"\n") {
			return true
		}
	}
	return false
}

// killGuardian ends a guardian with SIGKILL and waits until it is gone.
func killGuardian(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pid, 5*time.Second) {
		t.Fatalf("guardian %d still runs after SIGKILL", pid)
	}
}

// checkLost checks an answer about a session lost while lostCommand ran.
func checkLost(t *testing.T, what string, r daemonToolResult, oldShell int) lostInit {
	t.Helper()
	var li lostInit
	json.Unmarshal(r.Data, &li)
	text := r.Output + "\n" + r.Message
	if reattachedText(text) || li.Reattached {
		t.Errorf("%s answers reattached to a dead session: %s/%s %q", what, r.Status, r.ErrorCode, text)
	}
	if r.ErrorCode != "initialize_recovered_missing_session" {
		t.Errorf("%s errorCode = %q (%s), want initialize_recovered_missing_session", what, r.ErrorCode, r.Status)
	}
	if !strings.Contains(r.Message, "lost") || !strings.Contains(r.Message, "fresh shell") {
		t.Errorf("%s message = %q, want it to say the session was lost and a fresh shell started", what, r.Message)
	}
	if !strings.Contains(r.Output, lostCommand) {
		t.Errorf("%s does not name the lost command %q: %q", what, lostCommand, r.Output)
	}
	if li.Lost == nil || li.Lost.Journal == "" || li.Lost.JournalLines < 500 {
		t.Fatalf("%s data.lost = %+v, want the journal with at least 500 lines (output %q)", what, li.Lost, r.Output)
	}
	if want := "journal: " + li.Lost.Journal + " (" + strconv.Itoa(li.Lost.JournalLines) + " lines)"; !strings.Contains(r.Output, want) {
		t.Errorf("%s output %q lacks %q", what, r.Output, want)
	}
	if n := len(li.Lost.LastLines); n == 0 || li.Lost.LastLines[n-1] != "500" || !strings.Contains(r.Output, "  500\n") {
		t.Errorf("%s last lines = %q (output %q), want them to end with 500", what, li.Lost.LastLines, r.Output)
	}
	if li.ShellPID == oldShell {
		t.Errorf("%s shell pid = %d, the dead shell's", what, li.ShellPID)
	}
	return li
}

// TestDaemonLostSessionNotReattached: a session whose guardian was killed
// (SIGKILL) while a command ran is never answered as reattached. From the
// adapter that ran the command and from a new adapter alike, first_call
// says the session was lost and a fresh shell started, names the command,
// its journal and line count, shows its last lines, and the next command
// runs in the fresh shell. A plain BashCommand on a lost session answers
// the same typed status, not a bare "guardian is gone".
func TestDaemonLostSessionNotReattached(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	a := d.adapter()
	s := a.mustInit(root)

	// The same adapter.
	killGuardian(t, startLost(t, d, a, s))
	r := a.tool("Initialize", map[string]any{"any_workspace_path": root})
	li := checkLost(t, "first_call from the same adapter", r, s.ShellPID)
	if r := a.bash(s, command("echo fresh=$$"), 10); r.Status != "completed" || !strings.Contains(r.Output, "fresh="+strconv.Itoa(li.ShellPID)) {
		t.Errorf("BashCommand after the recovery = %s/%s %q, want fresh=%d", r.Status, r.ErrorCode, r.Output, li.ShellPID)
	}

	// A new adapter (the first one gone too).
	killGuardian(t, startLost(t, d, a, s))
	a.kill()
	b := d.adapter()
	r = b.tool("Initialize", map[string]any{"any_workspace_path": root})
	li = checkLost(t, "first_call from a new adapter", r, li.ShellPID)
	if r := b.bash(s, command("echo fresh=$$"), 10); r.Status != "completed" || !strings.Contains(r.Output, "fresh="+strconv.Itoa(li.ShellPID)) {
		t.Errorf("BashCommand after the recovery from a new adapter = %s/%s %q, want fresh=%d", r.Status, r.ErrorCode, r.Output, li.ShellPID)
	}

}

// TestDaemonLostSessionBashCommand: a plain BashCommand (no Initialize)
// on a session whose guardian was killed answers the typed lost status,
// not a bare "guardian is gone"; the next command runs in a fresh shell,
// and the session's principal reads the journal the answer named.
func TestDaemonLostSessionBashCommand(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	b := d.adapter()
	s := b.mustInit(root)
	killGuardian(t, startLost(t, d, b, s))
	r := b.bash(s, command("echo after"), 5)
	if strings.Contains(r.Message+r.Output, "guardian is gone") || r.Status == "completed" {
		t.Errorf("BashCommand on a lost session = %s/%s %q %q, want the typed lost status", r.Status, r.ErrorCode, r.Message, r.Output)
	}
	li := checkLost(t, "BashCommand on a lost session", r, s.ShellPID)
	if r := b.bash(s, command("echo fresh=$$"), 10); r.Status != "completed" || !strings.Contains(r.Output, "fresh=") {
		t.Errorf("BashCommand after the lost answer = %s/%s %q", r.Status, r.ErrorCode, r.Output)
	}
	// Its principal reads the journal the answer named.
	rf := b.tool("ReadFiles", map[string]any{"file_paths": []string{li.Lost.Journal}, "thread_id": s.ThreadID, "workspace_root": root})
	if rf.Status != "completed" || !strings.Contains(rf.Output, "500") {
		t.Errorf("ReadFiles of the lost journal = %s/%s %q", rf.Status, rf.ErrorCode, rf.Message)
	}
}

// TestDaemonKillAllNotReattached: after `winx kill --all` ended a
// long-lived adapter's session, its first_call is not "Reattached": it
// says the session was lost and names the command the adapter last ran.
func TestDaemonKillAllNotReattached(t *testing.T) {
	d := newDaemonEnv(t)
	root := canonDir(t, t.TempDir())
	a := d.adapter()
	s := a.mustInit(root)
	if r := a.bash(s, command(lostCommand), 0.5); r.Status != "running" {
		t.Fatalf("%s = %s/%s %q, want running", lostCommand, r.Status, r.ErrorCode, r.Message)
	}
	if _, err := d.winx("kill", "--all"); err != nil {
		t.Fatal(err)
	}
	r := a.tool("Initialize", map[string]any{"any_workspace_path": root})
	var li lostInit
	json.Unmarshal(r.Data, &li)
	if reattachedText(r.Output+r.Message) || li.Reattached || li.ShellPID == s.ShellPID {
		t.Errorf("first_call after winx kill --all = %s/%s %q, data %s: want no reattach to the dead shell %d", r.Status, r.ErrorCode, r.Message, r.Data, s.ShellPID)
	}
	if r.ErrorCode != "initialize_recovered_missing_session" || !strings.Contains(r.Output, lostCommand) {
		t.Errorf("first_call after winx kill --all = %s/%s %q, want the lost status naming %q", r.Status, r.ErrorCode, r.Output, lostCommand)
	}
	if r := a.bash(s, command("echo fresh"), 10); r.Status != "completed" {
		t.Errorf("BashCommand after the recovery = %s/%s %q", r.Status, r.ErrorCode, r.Message)
	}
}

// readFileString reads a small file the guardian keeps.
func readFileString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// reattachedText reports whether an answer says it reattached ("Reattached
// to the running session", "Reattached: same shell").
func reattachedText(s string) bool {
	return strings.Contains(s, "Reattached to") || strings.Contains(s, "Reattached:")
}

// carolToken is a third principal's token (TestDaemonLostJournalPrincipals).
const carolToken = "carol-token-0123456789abcdefghijklmnopqrstuvw"

// TestDaemonLostJournalPrincipals: over HTTP with two principals, the
// journal a lost-session answer names can be read with ReadFiles by the
// session's principal and by nobody else, even through a session of the
// same workspace.
func TestDaemonLostJournalPrincipals(t *testing.T) {
	d := newDaemonEnv(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "carol.tok"), []byte(carolToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writePrincipals(t, "\n[[principals]]\nname = \"carol\"\ntoken_file = \""+filepath.Join(dir, "carol.tok")+"\"\ntool_profile = \"coding\"\n")
	cmd := exec.Command(filepath.Join(d.bins, "winx"), "serve", "--http", "--bind", "127.0.0.1:0", "--requests-per-minute", "0", "--principal-config", cfg)
	cmd.Env = d.env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &runningServe{client: &http.Client{Timeout: 30 * time.Second}}
	s.setAddr(servingAddr(t, stderr, nil))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := s.client.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("winx serve --http did not answer")
		}
	}
	sc := func(m map[string]any) map[string]any {
		res, _ := m["result"].(map[string]any)
		c, _ := res["structuredContent"].(map[string]any)
		return c
	}
	root := canonDir(t, t.TempDir())
	ids := map[string]string{"thread_id": "t1", "workspace_root": root}
	callAs(t, s, codingToken, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "t1"})
	if st := sc(callAs(t, s, codingToken, "BashCommand", map[string]any{"command": lostCommand, "wait_for_seconds": 0.5, "thread_id": "t1", "workspace_root": root}))["status"]; st != "running" {
		t.Fatalf("%s = %v, want running", lostCommand, st)
	}
	for deadline := time.Now().Add(10 * time.Second); !outputOnDisk(d, "500"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command's output did not reach the disk")
		}
	}
	pid := 0
	for _, e := range d.list() {
		if e.Workspace == root && e.Principal == "alice" {
			pid = e.PID
		}
	}
	if pid == 0 {
		t.Fatalf("no guardian of alice's session in winx list: %+v", d.list())
	}
	killGuardian(t, pid)
	got := sc(callAs(t, s, codingToken, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "t1"}))
	data, _ := got["data"].(map[string]any)
	lost, _ := data["lost"].(map[string]any)
	journal, _ := lost["journal"].(string)
	if got["errorCode"] != "initialize_recovered_missing_session" || journal == "" {
		t.Fatalf("first_call after the guardian was killed = %v", got)
	}
	read := func(token string) map[string]any {
		return sc(callAs(t, s, token, "ReadFiles", map[string]any{"file_paths": []string{journal}, "thread_id": ids["thread_id"], "workspace_root": root}))
	}
	if r := read(codingToken); r["status"] != "completed" || !strings.Contains(r["output"].(string), "500") {
		t.Errorf("the session's principal reading its lost journal = %v, want the journal", r)
	}
	callAs(t, s, carolToken, "Initialize", map[string]any{"any_workspace_path": root, "thread_id": "t1"})
	if r := read(carolToken); r["status"] == "completed" || strings.Contains(fmt.Sprint(r["output"]), "499") {
		t.Errorf("another principal reading the lost journal = %v, want it denied", r)
	}
}

// TestDaemonSweptAndReclaimedNotReattached covers the two endings winxd
// decides on its own: the idle sweep of a never-used session, and the
// reclaim of a never-used idle session when a new one needs its place at
// the quota. Either way the adapter that started the session must not call
// it "reattached" on its next first_call.
func TestDaemonSweptAndReclaimedNotReattached(t *testing.T) {
	check := func(t *testing.T, a *adapter, root string, old initData) {
		t.Helper()
		r := a.tool("Initialize", map[string]any{"any_workspace_path": root})
		var li lostInit
		json.Unmarshal(r.Data, &li)
		if reattachedText(r.Output+r.Message) || li.Reattached || li.ShellPID == old.ShellPID {
			t.Errorf("first_call after winxd ended the session = %s/%s %q, data %s: want no reattach to the dead shell %d", r.Status, r.ErrorCode, r.Message, r.Data, old.ShellPID)
		}
		if r := a.bash(old, command("echo fresh"), 10); r.Status != "completed" {
			t.Errorf("BashCommand after the recovery = %s/%s %q", r.Status, r.ErrorCode, r.Message)
		}
	}
	t.Run("idle sweep", func(t *testing.T) {
		d := newDaemonEnv(t, "WINX_UNUSED_SESSION_IDLE_TTL_SECS=1", "WINX_GUARDIAN_SWEEP_INTERVAL_SECS=1")
		t.Cleanup(d.teardown)
		root := canonDir(t, t.TempDir())
		a := d.adapter()
		s := a.mustInit(root)
		deadline := time.Now().Add(30 * time.Second)
		for syscall.Kill(s.ShellPID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if syscall.Kill(s.ShellPID, 0) == nil {
			t.Fatalf("winxd's sweep did not end the never-used session")
		}
		check(t, a, root, s)
	})
	t.Run("quota reclaim", func(t *testing.T) {
		d := newDaemonEnv(t, "WINX_MAX_GUARDIANS=1")
		t.Cleanup(d.teardown)
		first, second := canonDir(t, t.TempDir()), canonDir(t, t.TempDir())
		a, b := d.adapter(), d.adapter()
		s := a.mustInit(first)
		b.mustInit(second) // reclaims the first, never used
		deadline := time.Now().Add(30 * time.Second)
		for syscall.Kill(s.ShellPID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(s.ShellPID, 0) == nil {
			t.Fatalf("the quota did not reclaim the never-used session")
		}
		check(t, a, first, s)
	})
}
