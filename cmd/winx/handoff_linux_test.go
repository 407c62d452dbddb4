package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseCredentials(t *testing.T) {
	good := []credentials{
		{},
		{env: []string{"WINX_HTTP_TOKEN=" + serveTestToken}},
		{env: []string{"A=x=y", "B="}, token: serveTestToken},
		{token: "t"},
	}
	for _, c := range good {
		got, err := parseCredentials(c.marshal())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("parseCredentials(marshal(%q)) = %q, %v; want it back", c, got, err)
		}
	}
	bad := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"cut short", credentialMagic + "\x00env\x00A=b\x00"},
		{"no end mark", credentialMagic + "\x00env\x00A=b"},
		{"wrong magic", "winx-credentials-0\x00end\x00"},
		{"unknown kind", credentialMagic + "\x00arg\x00x\x00end\x00"},
		{"odd record", credentialMagic + "\x00env\x00end\x00"},
		{"entry without name", credentialMagic + "\x00env\x00=b\x00end\x00"},
		{"two tokens", credentialMagic + "\x00token\x00a\x00token\x00b\x00end\x00"},
		{"too large", credentialMagic + "\x00token\x00" + strings.Repeat("a", maxCredentialBytes) + "\x00end\x00"},
	}
	for _, tt := range bad {
		if _, err := parseCredentials([]byte(tt.data)); !errors.Is(err, ErrCredentialHandoff) {
			t.Errorf("%s: parseCredentials = %v, want ErrCredentialHandoff", tt.name, err)
		}
	}
}

// TestCredentialFD hands credentials over on a real descriptor, the way a
// re-executed image receives them: a socket while they fit its buffer, a
// sealed memfd beyond, and the descriptor is closed once read.
func TestCredentialFD(t *testing.T) {
	for _, tt := range []struct {
		name     string
		tokenLen int
		kind     uint32
	}{
		{"socket", 64, unix.S_IFSOCK},
		{"memfd", 600 << 10, unix.S_IFREG},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := credentials{env: []string{"WINX_HTTP_TOKEN=" + strings.Repeat("t", tt.tokenLen)}, token: serveTestToken}
			fd, err := credentialFD(c.marshal())
			if err != nil {
				t.Fatal(err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != tt.kind {
				t.Errorf("descriptor mode %o, %v; want kind %o", st.Mode, err, tt.kind)
			}
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
				t.Errorf("descriptor flags %x, %v: want it inherited across exec", flags, err)
			}
			got, err := receiveCredentials(strconv.Itoa(fd))
			if err != nil || !reflect.DeepEqual(got, c) {
				t.Errorf("receiveCredentials = %.40q, %v; want what was sent", got, err)
			}
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
				t.Errorf("descriptor %d still open after reading: %v", fd, err)
			}
		})
	}
}

// TestReceiveCredentialsRefuses: the marker must name a descriptor of the
// kind reexecWith makes.
func TestReceiveCredentialsRefuses(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	unsealed, err := unix.MemfdCreate("unsealed", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range []string{"", "x", "0", "2", "-1", strconv.Itoa(p[0]), strconv.Itoa(unsealed)} {
		if _, err := receiveCredentials(fd); !errors.Is(err, ErrCredentialHandoff) {
			t.Errorf("receiveCredentials(%q) = %v, want ErrCredentialHandoff", fd, err)
		}
	}
}

// startBuilt starts the built winx with env added to this test's
// environment and returns it with its stderr.
func startBuilt(t *testing.T, env []string, files []*os.File, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(buildWinx(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.ExtraFiles = files
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, stderr
}

// TestServeHandsOverLargeCredentials: tokens too large for the socket's
// buffer reach the re-executed server through the memfd, and one of them
// authenticates; the environment block holds none of them.
func TestServeHandsOverLargeCredentials(t *testing.T) {
	dir := t.TempDir()
	var cfg strings.Builder
	var env, tokens []string
	for i := range 6 {
		name := fmt.Sprintf("WINX_TEST_BIG_TOKEN_%d", i)
		tok := fmt.Sprintf("big%d-", i) + strings.Repeat("t", 48<<10)
		fmt.Fprintf(&cfg, "[[principals]]\nname = \"p%d\"\ntoken_env = %q\n\n", i, name)
		env, tokens = append(env, name+"="+tok), append(tokens, tok)
	}
	path := filepath.Join(dir, "principals.toml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stderr := startBuilt(t, env, nil, "serve", "--http", "--bind", "127.0.0.1:0", "--principal-config", path)
	s := &runningServe{client: &http.Client{Timeout: 20 * time.Second}}
	s.setAddr(servingAddr(t, stderr, nil))
	up := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !up; time.Sleep(20 * time.Millisecond) {
		if resp, err := s.client.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			up = true
		}
	}
	if !up {
		t.Fatalf("not serving; stderr: %s", stderr)
	}
	if resp, body := s.post(t, discoverHeader("Bearer "+tokens[5]), discoverBody); resp.StatusCode != http.StatusOK {
		t.Errorf("the last large token: %d %s", resp.StatusCode, body)
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), "WINX_TEST_BIG_TOKEN") || strings.Contains(string(environ), tokens[0][:20]) {
		t.Errorf("the environment block holds a token variable")
	}
}

// TestServeCredentialHandoffFailsClosed: a handoff that cannot be read, or
// credentials too large to hand over, stop start-up with a message; the
// server never runs on.
func TestServeCredentialHandoffFailsClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Close()
	huge := make([]string, 9)
	for i := range huge {
		huge[i] = fmt.Sprintf("WINX_TEST_HUGE_%d=", i) + strings.Repeat("h", 120<<10)
	}
	dir := t.TempDir()
	var cfg strings.Builder
	for i := range huge {
		fmt.Fprintf(&cfg, "[[principals]]\nname = \"p%d\"\ntoken_env = \"WINX_TEST_HUGE_%d\"\n\n", i, i)
	}
	path := filepath.Join(dir, "principals.toml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		env   []string
		files []*os.File
		args  []string
		want  string
	}{
		{"marker naming a pipe", []string{credentialFDVar + "=3", "WINX_HTTP_TOKEN=" + serveTestToken}, []*os.File{r}, nil, "neither a socket nor a memfd"},
		{"marker naming nothing", []string{credentialFDVar + "=9", "WINX_HTTP_TOKEN=" + serveTestToken}, nil, nil, "descriptor 9"},
		{"too large", huge, nil, []string{"--principal-config", path}, "larger than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--http", "--bind", "127.0.0.1:0"}, tt.args...)
			cmd, stderr := startBuilt(t, tt.env, tt.files, args...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 {
					t.Errorf("exit: %v, want status 1", err)
				}
			case <-ctx.Done():
				t.Fatalf("still running; stderr: %s", stderr)
			}
			if got := stderr.String(); !strings.Contains(got, "credential handoff") || !strings.Contains(got, tt.want) {
				t.Errorf("stderr %q, want the handoff named and %q", got, tt.want)
			}
		})
	}
}
