package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"winx/guardian/daemon"
	"winx/guardian/daemon/operator"
	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
)

var (
	daemonBinsOnce sync.Once
	daemonBinsDir  string
	daemonBinsOut  []byte
	daemonBinsErr  error
)

// daemonBins builds winx, winxd and winx-guardian side by side once per test
// process (under TestMain's directory, which it removes).
func daemonBins(tb testing.TB) string {
	tb.Helper()
	daemonBinsOnce.Do(func() {
		daemonBinsDir = filepath.Join(binDir, "daemon")
		daemonBinsOut, daemonBinsErr = exec.Command("go", "build", "-o", daemonBinsDir+"/",
			"winx/cmd/winx", "winx/cmd/winxd", "winx/cmd/winx-guardian").CombinedOutput()
	})
	if daemonBinsErr != nil {
		tb.Fatalf("go build: %v\n%s", daemonBinsErr, daemonBinsOut)
	}
	return daemonBinsDir
}

// daemonEnv is a private runtime: its own socket directory and state
// directory, and the built binaries.
type daemonEnv struct {
	tb    testing.TB
	bins  string
	sock  string // socket directory
	state string // XDG_STATE_HOME
	env   []string
}

// newDaemonEnv prepares a private runtime and registers a cleanup that
// kills every guardian and winxd started in it, even when the test failed.
func newDaemonEnv(tb testing.TB, extraEnv ...string) *daemonEnv {
	tb.Helper()
	return newDaemonEnvWith(tb, daemonBins(tb), extraEnv...)
}

// newDaemonEnvWith is newDaemonEnv running the binaries in bins.
func newDaemonEnvWith(tb testing.TB, bins string, extraEnv ...string) *daemonEnv {
	tb.Helper()
	// Short: socket paths must fit a sockaddr_un.
	sock, err := os.MkdirTemp("", "wxd")
	if err != nil {
		tb.Fatal(err)
	}
	state := tb.TempDir()
	home := tb.TempDir()
	d := &daemonEnv{tb: tb, bins: bins, sock: sock, state: state}
	d.env = append(os.Environ(),
		"WINX_RUNTIME=daemon", "WINX_EMBEDDED=",
		"WINX_SOCKET="+filepath.Join(sock, wire.DaemonSocketName),
		"XDG_STATE_HOME="+state, "HOME="+home, "LANG=C.UTF-8",
		"WINXD_BIN=", "WINX_GUARDIAN_BIN=")
	d.env = append(d.env, extraEnv...)
	tb.Cleanup(func() {
		d.teardown()
		os.RemoveAll(sock)
	})
	return d
}

// teardown ends every process of the runtime: guardians by session.close
// (which also ends their shells), then by SIGKILL if they linger, and every
// winxd that answers or that the exit record names.
func (d *daemonEnv) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The runtime's wire secret; none means no winxd ever started.
	secret, _ := wire.LoadSecret(filepath.Join(d.state, "winx", wire.SecretFileName))
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(secret)
	f := &daemon.Fleet{Dir: d.sock, Hello: hello}
	live, _, _ := f.Discover(ctx)
	for _, g := range live {
		f.Close(ctx, g)
	}
	for _, g := range live {
		waitGone(g.PID, 3*time.Second)
		hermetic.Kill(g.PID, false)
		hermetic.Kill(g.Status.ShellPID, true)
	}
	c := &daemon.Client{Socket: filepath.Join(d.sock, wire.DaemonSocketName), Hello: hello}
	if peer, err := c.Ping(ctx); err == nil && peer.PID > 0 {
		hermetic.Kill(peer.PID, false)
	}
	if rec, err := daemon.ReadExitRecord(filepath.Join(d.state, "winx")); err == nil && rec.State == daemon.StateRunning && rec.PID > 0 {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", rec.PID)); err == nil && strings.HasPrefix(exe, d.bins) {
			hermetic.Kill(rec.PID, false)
		}
	}
}

// waitGone waits until pid no longer runs (gone or a zombie).
func waitGone(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if operator.Exited(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// winx runs an operator command of the built winx.
func (d *daemonEnv) winx(args ...string) (string, error) {
	d.tb.Helper()
	cmd := exec.Command(filepath.Join(d.bins, "winx"), args...)
	cmd.Env = d.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("winx %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// list runs `winx list`.
func (d *daemonEnv) list() []operator.ListEntry {
	d.tb.Helper()
	out, err := d.winx("list")
	if err != nil {
		d.tb.Fatal(err)
	}
	var l struct {
		Sessions []operator.ListEntry `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		d.tb.Fatalf("winx list printed no JSON (%v): %s", err, out)
	}
	return l.Sessions
}

// adapter is a winx process spoken to over stdio (modern era, stateless).
type adapter struct {
	tb    testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	id    int
}

func (d *daemonEnv) adapter() *adapter {
	d.tb.Helper()
	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = d.env
	cmd.Stderr = io.Discard
	return startAdapter(d.tb, cmd)
}

// startAdapter starts cmd (a winx over stdio, its stderr already set) and
// returns it as an adapter whose stdout lines arrive on lines; it is killed
// when the test ends.
func startAdapter(tb testing.TB, cmd *exec.Cmd) *adapter {
	tb.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	a := &adapter{tb: tb, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(a.lines)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				a.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	tb.Cleanup(a.kill)
	return a
}

func (a *adapter) kill() {
	if a.cmd.ProcessState != nil {
		return
	}
	a.cmd.Process.Kill()
	a.cmd.Wait()
}

// toolResult is the part of a tool answer the tests read.
type daemonToolResult struct {
	Status    string          `json:"status"`
	ErrorCode string          `json:"errorCode"`
	Message   string          `json:"message"`
	Output    string          `json:"output"`
	Data      json.RawMessage `json:"data"`
}

func (a *adapter) tool(name string, args map[string]any) daemonToolResult {
	a.tb.Helper()
	_, r := a.toolText(name, args, strings.TrimPrefix(modernMeta, `"_meta":`))
	return r
}

type initData struct {
	ThreadID      string `json:"thread_id"`
	WorkspaceRoot string `json:"workspace_root"`
	ShellPID      int    `json:"shell_pid"`
	Mode          string `json:"mode"`
	Reattached    bool   `json:"reattached"`
}

// initialize calls Initialize (first_call by default) and returns its data.
func (a *adapter) initialize(root, typ string) (daemonToolResult, initData) {
	a.tb.Helper()
	args := map[string]any{"type": "first_call", "any_workspace_path": root}
	if typ != "" {
		args["type"] = typ
	}
	r := a.tool("Initialize", args)
	var d initData
	if r.Status == "completed" {
		if err := json.Unmarshal(r.Data, &d); err != nil {
			a.tb.Fatalf("Initialize data: %v", err)
		}
	}
	return r, d
}

func (a *adapter) bash(s initData, action map[string]any, wait float64) daemonToolResult {
	a.tb.Helper()
	return a.tool("BashCommand", map[string]any{"action_json": action, "wait_for_seconds": wait,
		"thread_id": s.ThreadID, "workspace_root": s.WorkspaceRoot})
}

func command(c string) map[string]any { return map[string]any{"type": "command", "command": c} }

var statusCheck = map[string]any{"type": "status_check"}

func exitCode(r daemonToolResult) int {
	var d struct {
		ExitCode *int `json:"exit_code"`
	}
	json.Unmarshal(r.Data, &d)
	if d.ExitCode == nil {
		return -1
	}
	return *d.ExitCode
}

// mustInit initializes root and fails the test unless it completed.
func (a *adapter) mustInit(root string) initData {
	a.tb.Helper()
	r, d := a.initialize(root, "")
	if r.Status != "completed" || d.ShellPID == 0 {
		a.tb.Fatalf("Initialize(%s) = %+v", root, r)
	}
	return d
}

// waitDone polls a running command until it ends.
func (a *adapter) waitDone(s initData) daemonToolResult {
	a.tb.Helper()
	var out strings.Builder
	for range 10 {
		r := a.bash(s, statusCheck, 5)
		out.WriteString(r.Output)
		if r.Status != "running" {
			r.Output = out.String()
			return r
		}
	}
	a.tb.Fatal("the command did not end")
	return daemonToolResult{}
}

func TestDaemonSessionSurvivesAdapterKill(t *testing.T) {
	d := newDaemonEnv(t)
	root := t.TempDir()
	a := d.adapter()
	s := a.mustInit(root)
	r := a.bash(s, command("sleep 3; echo survived"), 0.5)
	if r.Status != "running" {
		t.Fatalf("sleep 3 after 0.5 s: status %q (%s), want running", r.Status, r.Message)
	}
	a.kill() // SIGKILL: nothing of the adapter runs its cleanup

	b := d.adapter()
	r2, s2 := b.initialize(root, "")
	if r2.Status != "completed" {
		t.Fatalf("Initialize from a new adapter = %+v", r2)
	}
	if s2.ShellPID != s.ShellPID {
		t.Errorf("new adapter's shell pid = %d, want the same shell %d", s2.ShellPID, s.ShellPID)
	}
	done := b.waitDone(s2)
	if !strings.Contains(done.Output, "survived") || exitCode(done) != 0 {
		t.Errorf("status_check after the adapter was killed = %q exit %d (%s), want survived, exit 0", done.Output, exitCode(done), done.Message)
	}
}

// TestDaemonReattachRestoresMode: the session's mode lives with its
// guardian, so a new adapter reattaching without naming a mode gets the
// mode the session had, and says it reattached.
func TestDaemonReattachRestoresMode(t *testing.T) {
	d := newDaemonEnv(t)
	root := t.TempDir()
	a := d.adapter()
	r, s := a.initialize(root, "")
	if r.Status != "completed" || s.Mode != "wcgw" {
		t.Fatalf("first Initialize = %+v %+v", r, s)
	}
	r = a.tool("Initialize", map[string]any{"type": "user_asked_mode_change", "mode_name": "architect",
		"thread_id": s.ThreadID, "any_workspace_path": root})
	if r.Status != "completed" {
		t.Fatalf("mode change = %+v", r)
	}
	// The change into architect started a fresh shell: that is the one
	// the next adapter must find.
	var arch initData
	if err := json.Unmarshal(r.Data, &arch); err != nil || arch.ShellPID == 0 {
		t.Fatalf("mode change data = %s (%v)", r.Data, err)
	}
	s.ShellPID = arch.ShellPID
	a.kill()

	b := d.adapter()
	r2, s2 := b.initialize(root, "")
	if r2.Status != "completed" || s2.ShellPID != s.ShellPID || !s2.Reattached || s2.Mode != "architect" {
		t.Fatalf("Initialize from a new adapter = %+v %+v; want the same shell, reattached, mode architect", r2, s2)
	}
	if denied := b.bash(s2, command("touch written"), 5); denied.Status != "denied" {
		t.Errorf("architect session ran a write after the adapter restart: %+v", denied)
	}
}

func TestDaemonRestartKeepsRunningCommand(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	s := a.mustInit(t.TempDir())
	if r := a.bash(s, command("sleep 2; echo finished"), 0.3); r.Status != "running" {
		t.Fatalf("sleep 2 after 0.3 s: status %q, want running", r.Status)
	}
	before := d.list()
	out, err := d.winx("restart-daemon")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "winxd restarted") {
		t.Errorf("restart-daemon printed %q", out)
	}
	done := a.waitDone(s)
	if !strings.Contains(done.Output, "finished") || exitCode(done) != 0 {
		t.Errorf("after restart-daemon the command gave %q exit %d, want finished, exit 0", done.Output, exitCode(done))
	}
	after := d.list()
	if len(after) != 1 || len(before) != 1 || after[0].PID != before[0].PID {
		t.Errorf("guardians before %v, after %v; want the same one", before, after)
	}
	doc, err := d.winx("doctor")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "winxd: answering") {
		t.Errorf("doctor after restart does not see winxd answering:\n%s", doc)
	}
	// The new winxd serves new sessions.
	a.mustInit(t.TempDir())
	if got := len(d.list()); got != 2 {
		t.Errorf("after a new session %d guardians, want 2", got)
	}
	rec, err := daemon.ReadExitRecord(filepath.Join(d.state, "winx"))
	if err != nil || rec.State != daemon.StateRunning {
		t.Errorf("exit record after restart = %+v, %v; want the new winxd running", rec, err)
	}
}

func TestDaemonGuardianKilledThenReset(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.adapter()
	s := a.mustInit(t.TempDir())
	if r := a.bash(s, command("echo one"), 5); !strings.Contains(r.Output, "one") {
		t.Fatalf("echo one = %+v", r)
	}
	l := d.list()
	if len(l) != 1 {
		t.Fatalf("winx list = %v, want one session", l)
	}
	if err := syscall.Kill(l[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(l[0].PID, 5*time.Second)
	r := a.bash(s, command("echo two"), 5)
	// The call did not run; it says the session was lost and that a
	// fresh shell replaced it.
	if r.Status != "failed" || r.ErrorCode != "initialize_recovered_missing_session" {
		t.Fatalf("a call after the guardian died = %+v, want failed initialize_recovered_missing_session", r)
	}
	rr, s2 := a.initialize(s.WorkspaceRoot, "reset_shell")
	if rr.Status != "completed" {
		t.Fatalf("reset_shell = %+v", rr)
	}
	if s2.ShellPID == s.ShellPID || s2.ShellPID == 0 {
		t.Errorf("reset_shell kept shell pid %d, want a new shell", s2.ShellPID)
	}
	if r := a.bash(s, command("echo three"), 5); !strings.Contains(r.Output, "three") || exitCode(r) != 0 {
		t.Errorf("echo after reset_shell = %+v", r)
	}
}

func TestDaemonQuotaReclaimsNeverUsed(t *testing.T) {
	d := newDaemonEnv(t, "WINX_MAX_GUARDIANS=2")
	a := d.adapter()
	used := a.mustInit(t.TempDir())
	if r := a.bash(used, command("true"), 5); exitCode(r) != 0 {
		t.Fatalf("true = %+v", r)
	}
	fresh := a.mustInit(t.TempDir())
	third := a.mustInit(t.TempDir())
	var threads []string
	for _, e := range d.list() {
		threads = append(threads, e.Thread)
	}
	slices.Sort(threads)
	want := []string{used.ThreadID, third.ThreadID}
	slices.Sort(want)
	if !slices.Equal(threads, want) {
		t.Fatalf("after a third session at quota 2 the sessions are %v, want %v (the never-used %s reclaimed)", threads, want, fresh.ThreadID)
	}
	if r := a.bash(third, command("true"), 5); exitCode(r) != 0 {
		t.Fatalf("true = %+v", r)
	}
	r, _ := a.initialize(t.TempDir(), "")
	if r.Status == "completed" || !strings.Contains(r.Output, "winx prune --idle-seconds 0") {
		t.Fatalf("a fourth session with none reclaimable = %+v, want an error naming the prune command", r)
	}
	if got := len(d.list()); got != 2 {
		t.Errorf("the refused session changed the guardians: %d live", got)
	}
	out, err := d.winx("prune", "--idle-seconds", "0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "pruned ") != 2 {
		t.Errorf("prune --idle-seconds 0 printed %q, want two sessions pruned", out)
	}
	a.mustInit(t.TempDir())
}

func TestDaemonOperatorCommands(t *testing.T) {
	const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
	d := newDaemonEnv(t, "WINX_HTTP_TOKEN="+secret)
	a := d.adapter()
	s := a.mustInit(t.TempDir())
	// A token on the screen is redacted in what attach prints.
	const token = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
	if r := a.bash(s, command("echo tok-"+"$(printf %s "+token+")"), 5); exitCode(r) != 0 {
		t.Fatalf("echo = %+v", r)
	}
	if r := a.bash(s, command("echo attach-marker"), 5); exitCode(r) != 0 {
		t.Fatalf("echo = %+v", r)
	}
	other := a.mustInit(t.TempDir())

	l := d.list()
	if len(l) != 2 {
		t.Fatalf("winx list = %+v, want two sessions", l)
	}
	var e operator.ListEntry
	for _, x := range l {
		if x.Thread == s.ThreadID {
			e = x
		}
	}
	if e.Workspace != s.WorkspaceRoot || e.ShellPID != s.ShellPID || e.PID == 0 || !e.EverRanCommand ||
		e.Running || e.LastCommand != "echo attach-marker" || e.Created.IsZero() || !e.SameBuild || e.Build == "" {
		t.Errorf("winx list entry = %+v", e)
	}

	out, err := d.winx("attach", s.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "attach-marker") || !strings.Contains(out, s.ThreadID) {
		t.Errorf("winx attach printed %q, want the screen with attach-marker", out)
	}
	if strings.Contains(out, token) || !strings.Contains(out, "[REDACTED:") {
		t.Errorf("winx attach printed %q, want the token redacted", out)
	}

	// --follow prints what appears later, until interrupted.
	follow := exec.Command(filepath.Join(d.bins, "winx"), "attach", s.ThreadID, "--follow")
	follow.Env = d.env
	fout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follow.Process.Kill(); follow.Wait() })
	seen, first := make(chan struct{}), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(fout)
		printed := first
		for sc.Scan() {
			if printed != nil && strings.Contains(sc.Text(), "attach-marker") {
				close(printed)
				printed = nil
			}
			if strings.Contains(sc.Text(), "later-marker") && !strings.Contains(sc.Text(), "echo") {
				close(seen)
				io.Copy(io.Discard, fout)
				return
			}
		}
	}()
	// Not a sleep: the first screen (which shows attach-marker) is printed.
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("attach --follow did not print the first screen")
	}
	a.bash(s, command("echo later-marker"), 5)
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("attach --follow did not print the new output")
	}
	follow.Process.Signal(os.Interrupt)
	if err := follow.Wait(); err != nil {
		t.Errorf("attach --follow after SIGINT: %v, want exit 0", err)
	}

	doc, err := d.winx("doctor")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{d.sock + " [used]", "mode 0700", "2 answering", "winxd: answering", "split-brain: none", "winxd last exit:"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, doc)
		}
	}
	listOut, _ := d.winx("list")
	for name, text := range map[string]string{"doctor": doc, "list": listOut} {
		if strings.Contains(text, secret) {
			t.Errorf("%s printed the token", name)
		}
	}

	out, err = d.winx("kill", other.ThreadID)
	if err != nil || !strings.Contains(out, other.ThreadID) {
		t.Fatalf("winx kill = %q, %v", out, err)
	}
	if l := d.list(); len(l) != 1 || l[0].Thread != s.ThreadID {
		t.Errorf("after kill, sessions = %+v, want only %s", l, s.ThreadID)
	}
	if _, err := d.winx("kill", "ws_nothing_00000000"); err == nil {
		t.Errorf("kill of an unknown thread succeeded")
	}
	if out, err := d.winx("kill", "--all"); err != nil || !strings.Contains(out, s.ThreadID) {
		t.Errorf("kill --all = %q, %v", out, err)
	}
	if l := d.list(); len(l) != 0 {
		t.Errorf("after kill --all, sessions = %+v", l)
	}
}

func TestDaemonStartFailureIsClear(t *testing.T) {
	d := newDaemonEnv(t, "WINXD_BIN="+filepath.Join(t.TempDir(), "no-such-winxd"))
	a := d.adapter()
	r, _ := a.initialize(t.TempDir(), "")
	if r.Status != "failed" || !strings.Contains(r.Output, "WINX_RUNTIME=embedded") || !strings.Contains(r.Output, "WINXD_BIN") {
		t.Errorf("Initialize with no winxd = %+v, want a failure naming WINXD_BIN and WINX_RUNTIME=embedded", r)
	}
}

// BenchmarkBashEchoViaDaemon measures `echo hi` through the MCP tool layer
// of a built winx over stdio, in the daemon runtime: the adapter's
// BashCommand, a connection to the session's guardian, the guardian's shell
// and back. It reports the median and the 99th percentile.
func BenchmarkBashEchoViaDaemon(b *testing.B) {
	d := newDaemonEnv(b)
	a := d.adapter()
	s := a.mustInit(b.TempDir())
	a.bash(s, command("echo warm"), 10)
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := a.bash(s, command("echo hi"), 10)
		durations = append(durations, time.Since(start))
		if !strings.HasPrefix(r.Output, "hi") {
			b.Fatalf("echo hi = %+v", r)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
}
