package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/guardian/wire"
	"winx/guardian/wire/hermetic"
)

// nobody is the unprivileged uid and gid the /proc test runs winx as.
const nobody = 65534

// copyExecutable copies the built binary src to dst, mode 0755.
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// procServe is winx serve --http started from copies of the built winx,
// winxd and winx-guardian, as some uid, with the daemon runtime: the /proc
// tests read every process of it.
type procServe struct {
	*runningServe
	dir string    // the copies and the server's directories (home, state, run, ws, cfg)
	cmd *exec.Cmd // winx; its pid is the server's for its whole life
}

// newProcDir makes a short directory under /tmp that uid can reach (unlike
// TestMain's private one), with copies of the three binaries and
// directories home, state, run, ws and cfg owned by uid. Every process
// started from the copies is killed at cleanup.
func newProcDir(t *testing.T, uid int) string {
	t.Helper()
	bins := daemonBins(t)
	dir, err := os.MkdirTemp("/tmp", "wxu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"winx", "winxd", "winx-guardian"} {
		copyExecutable(t, filepath.Join(bins, name), filepath.Join(dir, name))
	}
	// Whatever happens, end every process started from these copies.
	t.Cleanup(func() { killByExe(dir) })
	for _, sub := range []string{"home", "state", "run", "ws", "cfg"} {
		p := filepath.Join(dir, sub)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startProcServe starts dir's winx serve --http as uid, with env added to
// a minimal hermetic environment and extra flags, and waits until /healthz
// answers.
func startProcServe(t *testing.T, dir string, uid int, env []string, extra ...string) *procServe {
	t.Helper()
	args := append([]string{"serve", "--http", "--bind", "127.0.0.1:0", "--requests-per-minute", "0"}, extra...)
	cmd := exec.Command(filepath.Join(dir, "winx"), args...)
	cmd.Dir = filepath.Join(dir, "ws")
	cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"WINX_SOCKET=" + filepath.Join(dir, "run", wire.DaemonSocketName),
		"WINX_RUNTIME=daemon",
		"LANG=C.UTF-8",
	}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}, Setpgid: true}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hermetic.Kill(cmd.Process.Pid, true)
		cmd.Wait()
	})
	s := &runningServe{client: &http.Client{Timeout: 30 * time.Second},
		cancel: func() {}, done: make(chan error, 1), stderr: stderr}
	s.setAddr(servingAddr(t, stderr, nil))
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := s.client.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			return &procServe{runningServe: s, dir: dir, cmd: cmd}
		}
	}
	t.Fatalf("winx not serving; stderr: %s", stderr)
	return nil
}

// TestProcEnvironUnreadable is finding 2(c): a session shell read
// WINX_HTTP_TOKEN from /proc/PID/environ of the server, which runs as the
// same user. winx, winxd and winx-guardian run here as an unprivileged uid
// (the daemon runtime, so all three exist), and the attack is run twice as
// that uid: from the test (cat /proc/PID/environ of winx) and from inside
// a session shell (every /proc/PID/environ it can open).
func TestProcEnvironUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the server as another, unprivileged uid")
	}
	p := startProcServe(t, newProcDir(t, nobody), nobody, []string{"WINX_HTTP_TOKEN=" + serveTestToken})
	s, cmd, dir, stderr := p.runningServe, p.cmd, p.dir, p.stderr

	// The attack from outside a session, as the same uid.
	environ := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ"
	cat := exec.Command("cat", environ)
	cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cat.CombinedOutput()
	if err == nil || strings.Contains(string(out), "WINX_HTTP_TOKEN") {
		t.Errorf("uid %d read %s: err %v, %d bytes", nobody, environ, err, len(out))
	} else if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("cat %s: %v %q, want EACCES", environ, err, out)
	}

	// The attack from inside a session shell: every process whose
	// environment it can read, and whether any holds the token.
	ws := filepath.Join(dir, "ws")
	m := callAs(t, s, serveTestToken, "Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "proc"})
	if sc := structured(m); sc["status"] != "completed" && sc["status"] != "completed_with_issues" {
		t.Fatalf("Initialize: %v; stderr: %s", m, stderr)
	}
	script := `for p in /proc/[0-9]*; do if cat $p/environ >/dev/null 2>&1; then echo "READABLE $(cat $p/comm 2>/dev/null)"; fi; done; ` +
		`echo "TOKENHITS $(grep -l WINX_HTTP_TOKEN= /proc/[0-9]*/environ 2>/dev/null | wc -l)"`
	m = callAs(t, s, serveTestToken, "BashCommand", map[string]any{"command": script, "thread_id": "proc", "workspace_root": ws})
	got, _ := structured(m)["output"].(string)
	if !strings.Contains(got, "READABLE bash") {
		t.Fatalf("the probe did not run as expected: %v", m)
	}
	for _, name := range []string{"winx", "winxd", "winx-guardian"} {
		if strings.Contains(got, "READABLE "+name+"\n") {
			t.Errorf("a session shell reads the environment of %s:\n%s", name, got)
		}
	}
	if !strings.Contains(got, "TOKENHITS 0") {
		t.Errorf("a session shell found WINX_HTTP_TOKEN in /proc:\n%s", got)
	}
}

// killByExe kills every process whose executable lies in dir: the winx,
// winxd and guardians this test started from its own copies, and nothing
// else.
func killByExe(dir string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			hermetic.Kill(pid, false)
		}
	}
}

// processesOf lists the processes whose executable lies in dir and all
// their descendants (the session shells and what they run).
func processesOf(dir string) map[int]string {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	ours := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			ours[pid] = filepath.Base(exe)
		}
		// The parent is the field after the command name, which may
		// itself hold spaces and parentheses.
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
				if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
					parent[pid], _ = strconv.Atoi(f[1])
				}
			}
		}
	}
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if _, ok := ours[p]; ok {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				if _, own := ours[pid]; !own {
					ours[pid] = strings.TrimSpace(string(comm))
				}
				break
			}
		}
	}
	return ours
}

// TestProcHasNoTokens is the review's finding that root (CAP_SYS_PTRACE,
// which an undumpable process does not stop) read a principal's token from
// /proc/PID/environ of winx serve: the kernel shows the environment the
// process was started with. The server runs as root and as an unprivileged
// uid with tokens in its environment (WINX_HTTP_TOKEN, a token_env
// variable, a copy of a token under another name), a session makes winxd, a
// guardian and a shell exist, and then root and that uid read environ and
// cmdline of every one of them: no token and no token variable may show.
// The tokens still authenticate, and a wrong one still gets 401.
func TestProcHasNoTokens(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack is root's, and the server also runs as another uid")
	}
	const fileToken = readerToken
	tests := []struct {
		name  string
		env   []string
		args  func(dir string) []string // flags after serve --http, given the test's directory
		good  []string                  // tokens that must authenticate
		names []string                  // variable names that must not show
	}{{
		name:  "WINX_HTTP_TOKEN",
		env:   []string{"WINX_HTTP_TOKEN=" + serveTestToken, bobTokenCopy + "=" + serveTestToken},
		args:  func(string) []string { return nil },
		good:  []string{serveTestToken},
		names: []string{"WINX_HTTP_TOKEN", bobTokenCopy},
	}, {
		name: "token_env",
		env:  []string{bobTokenEnv + "=" + bobEnvToken, bobTokenCopy + "=" + bobEnvToken},
		args: func(dir string) []string {
			return []string{"--principal-config", filepath.Join(dir, "cfg", "principals.toml")}
		},
		good:  []string{bobEnvToken, fileToken},
		names: []string{bobTokenEnv, bobTokenCopy},
	}, {
		name:  "--token",
		env:   []string{bobTokenCopy + "=" + serveTestToken},
		args:  func(string) []string { return []string{"--token", serveTestToken} },
		good:  []string{serveTestToken},
		names: []string{bobTokenCopy},
	}}
	for _, uid := range []int{0, nobody} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("uid%d/%s", uid, tt.name), func(t *testing.T) {
				dir := newProcDir(t, uid)
				cfg := filepath.Join(dir, "cfg")
				principals := "[[principals]]\nname = \"env\"\ntoken_env = \"" + bobTokenEnv + "\"\n\n" +
					"[[principals]]\nname = \"file\"\ntoken_file = \"file.tok\"\n"
				for name, data := range map[string]string{"principals.toml": principals, "file.tok": fileToken + "\n"} {
					if err := os.WriteFile(filepath.Join(cfg, name), []byte(data), 0o600); err != nil {
						t.Fatal(err)
					}
					if err := os.Chown(filepath.Join(cfg, name), uid, uid); err != nil {
						t.Fatal(err)
					}
				}
				s := startProcServe(t, dir, uid, tt.env, tt.args(dir)...)

				for _, tok := range tt.good {
					resp, body := s.post(t, discoverHeader("Bearer "+tok), discoverBody)
					if resp.StatusCode != http.StatusOK {
						t.Errorf("token %.12s...: %d %s; stderr: %s", tok, resp.StatusCode, body, s.stderr)
					}
				}
				if resp, _ := s.post(t, discoverHeader("Bearer "+codingToken), discoverBody); resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("a wrong token: %d, want 401", resp.StatusCode)
				}
				// A session: winxd, a guardian and its shell.
				ws := filepath.Join(dir, "ws")
				callAs(t, s.runningServe, tt.good[0], "Initialize", map[string]any{"any_workspace_path": ws, "thread_id": "proc"})
				m := callAs(t, s.runningServe, tt.good[0], "BashCommand", map[string]any{"command": "echo shell-$((6*7))", "thread_id": "proc", "workspace_root": ws})
				if out, _ := structured(m)["output"].(string); !strings.Contains(out, "shell-42") {
					t.Fatalf("BashCommand: %v; stderr: %s", m, s.stderr)
				}

				procs := processesOf(dir)
				seen := map[string]bool{}
				for _, name := range procs {
					seen[name] = true
				}
				if procs[s.cmd.Process.Pid] != "winx" || !seen["winxd"] || !seen["winx-guardian"] || !seen["bash"] {
					t.Fatalf("want the started winx (pid %d), winxd, a guardian and bash, got %v", s.cmd.Process.Pid, procs)
				}
				secrets := append(slices.Clone(tt.good), tt.names...)
				for pid, name := range procs {
					for _, file := range []string{"environ", "cmdline"} {
						path := fmt.Sprintf("/proc/%d/%s", pid, file)
						// As root, with CAP_SYS_PTRACE.
						data, err := os.ReadFile(path)
						if err != nil {
							t.Errorf("root: read %s (%s): %v", path, name, err)
						}
						// As the unprivileged uid: refused, or clean.
						cat := exec.Command("cat", path)
						cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
						asNobody, _ := cat.Output()
						for reader, got := range map[string][]byte{"root": data, "uid " + strconv.Itoa(nobody): asNobody} {
							for _, sec := range secrets {
								if strings.Contains(string(got), sec) {
									t.Errorf("%s read %q in %s (%s)", reader, sec, path, name)
								}
							}
						}
					}
				}
			})
		}
	}
}
