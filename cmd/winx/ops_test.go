package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/cmd/internal/oplog"
	"winx/pty/testenv"
)

// TestDaemonIdleTTLFromEnvironment: the idle policy's variables reach the
// winxd the adapter starts; a never-used session ends after its TTL.
func TestDaemonIdleTTLFromEnvironment(t *testing.T) {
	d := newDaemonEnv(t, "WINX_UNUSED_SESSION_IDLE_TTL_SECS=2", "WINX_GUARDIAN_SWEEP_INTERVAL_SECS=1")
	a := d.adapter()
	s := a.mustInit(t.TempDir())
	start := time.Now()
	// The acceptance bound is 10 s; the deadline is generous for a loaded
	// machine, and the elapsed time is logged.
	for {
		alive := false
		for _, e := range d.list() {
			alive = alive || e.Thread == s.ThreadID
		}
		if !alive {
			t.Logf("the never-used session ended %v after Initialize", time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("session %s still live %v after Initialize with a 2 s never-used TTL and a 1 s sweep", s.ThreadID, time.Since(start))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// bashVersion runs `echo $BASH_VERSION` in the session.
func bashVersion(t *testing.T, a *adapter, s initData) string {
	t.Helper()
	r := a.bash(s, command(`echo "v=$BASH_VERSION"`), 10)
	if exitCode(r) != 0 {
		t.Fatalf("echo = %+v", r)
	}
	return strings.TrimSpace(r.Output)
}

func TestShellVariable(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Missing(t, "no bash")
	}
	t.Run("absolute bash", func(t *testing.T) {
		d := newDaemonEnv(t, "WINX_RUNTIME=embedded", "WINX_SHELL="+bash)
		a := d.adapter()
		s := a.mustInit(t.TempDir())
		if v := bashVersion(t, a, s); !strings.HasPrefix(v, "v=") || len(v) < 4 {
			t.Errorf("WINX_SHELL=%s: echo $BASH_VERSION = %q", bash, v)
		}
	})
	t.Run("shell args", func(t *testing.T) {
		d := newDaemonEnv(t, "WINX_RUNTIME=embedded", "WINX_SHELL_ARGS=-O globstar")
		a := d.adapter()
		s := a.mustInit(t.TempDir())
		r := a.bash(s, command("shopt -q globstar && echo globstar-on"), 10)
		if !strings.Contains(r.Output, "globstar-on") {
			t.Errorf("WINX_SHELL_ARGS=-O globstar: shopt globstar = %+v", r)
		}
	})
	// zsh asked for and not on PATH: PATH holds bash only, whether or not
	// the machine has zsh. The same happens for an absolute path to a zsh
	// that does not exist.
	onlyBash := t.TempDir()
	if err := os.Symlink(bash, filepath.Join(onlyBash, "bash")); err != nil {
		t.Fatal(err)
	}
	for _, zsh := range []string{"zsh", filepath.Join(t.TempDir(), "zsh")} {
		t.Run("missing "+zsh, func(t *testing.T) {
			d := newDaemonEnv(t, "WINX_RUNTIME=embedded", "WINX_SHELL="+zsh, "PATH="+onlyBash)
			a := d.adapter()
			r, s := a.initialize(t.TempDir(), "")
			if r.Status != "completed" {
				t.Fatalf("Initialize with WINX_SHELL=%s and no zsh = %+v, want it to start bash", zsh, r)
			}
			var data struct {
				Warnings []string `json:"warnings"`
			}
			json.Unmarshal(r.Data, &data)
			if len(data.Warnings) != 1 || !strings.Contains(data.Warnings[0], "zsh") || !strings.Contains(data.Warnings[0], "bash") {
				t.Errorf("Initialize warnings = %q, want one naming zsh and bash", data.Warnings)
			}
			if v := bashVersion(t, a, s); len(v) < 4 {
				t.Errorf("the fallback shell is not bash: %q", v)
			}
		})
	}
}

// checkOpLog asserts that stderr is JSON lines, that it holds exactly
// calls tool_call records, and that none of secrets appears in it.
func checkOpLog(t *testing.T, stderr string, calls int, secrets ...string) {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("stderr line is not a JSON object: %q", sc.Text())
			continue
		}
		if m["msg"] == oplog.MsgToolCall {
			n++
			for _, k := range []string{"tool", "principal", "status", "duration_ms", "bytes"} {
				if _, ok := m[k]; !ok {
					t.Errorf("tool_call record %s lacks %q", sc.Text(), k)
				}
			}
		}
	}
	if n != calls {
		t.Errorf("%d tool_call records for %d calls; stderr:\n%s", n, calls, stderr)
	}
	for _, s := range secrets {
		if strings.Contains(stderr, s) {
			t.Errorf("stderr holds %q:\n%s", s, stderr)
		}
	}
}

func TestOpLogJSONStdio(t *testing.T) {
	const secret = "sekrit-7c1e0d9b4a"
	d := newDaemonEnv(t, "WINX_RUNTIME=embedded", "WINX_LOG_FORMAT=json")
	var stderr syncBuffer
	b := startAdapterWithStderr(t, d, &stderr)
	s := b.mustInit(t.TempDir())
	r := b.bash(s, command("echo "+secret+"; echo argtext-marker"), 10)
	if !strings.Contains(r.Output, secret) {
		t.Fatalf("the command's output = %q, want the secret echoed", r.Output)
	}
	b.in.Close()
	b.cmd.Wait()
	checkOpLog(t, stderr.String(), 2, secret, "argtext-marker", s.WorkspaceRoot)
}

// startAdapterWithStderr is d.adapter with stderr kept.
func startAdapterWithStderr(t *testing.T, d *daemonEnv, stderr *syncBuffer) *adapter {
	t.Helper()
	cmd := exec.Command(filepath.Join(d.bins, "winx"))
	cmd.Env = d.env
	cmd.Stderr = stderr
	return startAdapter(t, cmd)
}

func TestOpLogJSONHTTP(t *testing.T) {
	const secret = "sekrit-5f2a8e6c31"
	d := newDaemonEnv(t, "WINX_RUNTIME=embedded", "WINX_LOG_FORMAT=json")
	tokenFile := writeServeToken(t, t.TempDir(), serveTestToken, 0o600)
	cmd := exec.Command(filepath.Join(d.bins, "winx"), "serve", "--http", "--bind", "127.0.0.1:0", "--token-file", tokenFile)
	cmd.Env = d.env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s := &runningServe{client: &http.Client{Timeout: 30 * time.Second}}
	s.setAddr(servingAddr(t, &stderr, nil))
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := s.client.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("winx serve --http not healthy; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tid, root := initSession(t, s)
	resp, body := s.post(t, callHeader("BashCommand"), callBody(2, "BashCommand", map[string]any{
		"thread_id": tid, "workspace_root": root, "wait_for_seconds": 10,
		"action_json": map[string]any{"type": "command", "command": "echo " + secret + "; echo argtext-marker"},
	}))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), secret) {
		t.Fatalf("BashCommand = %d %s", resp.StatusCode, body)
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	checkOpLog(t, stderr.String(), 2, secret, "argtext-marker", serveTestToken, root)
	if n := strings.Count(stderr.String(), `"msg":"`+oplog.MsgHTTPRequest+`"`); n < 3 {
		t.Errorf("%d http_request records for 3 requests; stderr:\n%s", n, stderr.String())
	}
	// Each tool_call record carries the request id of the http_request
	// record of the POST that carried it.
	ids := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			if id, _ := m["request_id"].(string); id != "" {
				ids[id] += m["msg"].(string) + ","
			}
		}
	}
	pairs := 0
	for _, kinds := range ids {
		if strings.Contains(kinds, oplog.MsgToolCall) && strings.Contains(kinds, oplog.MsgHTTPRequest) {
			pairs++
		}
	}
	if pairs != 2 {
		t.Errorf("%d tool calls share a request id with their HTTP request, want 2; stderr:\n%s", pairs, stderr.String())
	}
}

// TestDoctorConfigurationAndHelp: doctor shows the configuration in effect
// with its sources and no secret; --help names every command.
func TestDoctorConfigurationAndHelp(t *testing.T) {
	const secret = "tok-9d8c7b6a5f4e3d2c1b0a99887766554433"
	d := newDaemonEnv(t, "WINX_HTTP_TOKEN="+secret, "WINX_LOG=debug", "WINX_SHELL_ARGS="+secret)
	out, err := d.winx("doctor")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"configuration (secrets redacted):", "WINX_LOG=debug (environment)", "WINX_MAX_GUARDIANS=32 (default)", "WINX_HTTP_TOKEN=(set, redacted) (environment)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("doctor printed the token:\n%s", out)
	}
	cmd := exec.Command(filepath.Join(d.bins, "winx"), "--help")
	cmd.Env = d.env
	help, _ := cmd.CombinedOutput()
	for _, c := range []string{"serve", "report", "list", "jobs", "attach", "kill", "prune", "restart-daemon", "doctor", "worktrees"} {
		if !strings.Contains(string(help), "\n  "+c+" ") {
			t.Errorf("winx --help does not list %q:\n%s", c, help)
		}
	}
}
