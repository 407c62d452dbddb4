package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"winx/pty"
)

// ErrSpawn: a guardian process did not come up.
var ErrSpawn = errors.New("remote: guardian did not start")

// maxStartError bounds what a guardian that failed to start may say.
const maxStartError = 4 << 10

// Process is a guardian started by Spawn.
type Process struct {
	PID    int
	Socket string
	done   chan struct{}
	state  *os.ProcessState // set before done is closed
}

// Done is closed when the process has exited and was reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitState is the reaped process's state; nil while it runs.
func (p *Process) ExitState() *os.ProcessState {
	select {
	case <-p.done:
		return p.state
	default:
		return nil
	}
}

// Spawn starts binary (winx-guardian) for cfg with environment env, in a
// session of its own (setsid: no controlling terminal, no signals from the
// spawner's process group), stdin, stdout and stderr on /dev/null. It
// returns once the guardian listens and its shell printed its first prompt,
// or fails with ErrSpawn when the process exits first. The caller reaps by
// waiting on Done; the guardian outlives the caller if the caller exits.
func Spawn(ctx context.Context, binary string, cfg Config, env []string) (*Process, error) {
	socket, err := cfg.SocketPath(envLookup(env))
	if err != nil {
		return nil, err
	}
	cfg.Socket = socket
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("remote: readiness pipe: %w", err)
	}
	defer r.Close()
	cfg.ReadyFD = 3 // the first of ExtraFiles
	extra := []*os.File{w}
	if cfg.Secret != "" {
		// The secret goes down a pipe, never into the environment or the
		// arguments: it fits the pipe's buffer, so it is written now.
		sr, sw, err := os.Pipe()
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("remote: secret pipe: %w", err)
		}
		_, werr := sw.WriteString(cfg.Secret)
		sw.Close()
		defer sr.Close()
		if werr != nil {
			w.Close()
			return nil, fmt.Errorf("remote: secret pipe: %w", werr)
		}
		cfg.SecretFD = 3 + len(extra)
		extra = append(extra, sr)
		cfg.Secret = ""
	}
	// Its stderr comes here until it is ready: a guardian that cannot
	// start says why there (no space left on device, the path), and the
	// answer must name it, not only "exit status 1". Once it serves, the
	// read end is closed; the guardian ignores SIGPIPE, so a late write
	// fails and nothing else happens.
	er, ew, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("remote: stderr pipe: %w", err)
	}
	defer er.Close()
	cmd := exec.Command(binary, cfg.Args()...)
	cmd.Env = append(append([]string(nil), env...), cfg.Environ()...)
	cmd.ExtraFiles = extra
	cmd.Stderr = ew
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// Registered with package pty: in a subreaper (winxd), the orphan
	// reaper must not reap the guardian before cmd.Wait does, nor take it
	// for an orphan.
	err = pty.StartCommand(cmd)
	w.Close()
	ew.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpawn, err)
	}
	why := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(er, maxStartError))
		why <- strings.TrimSpace(string(b))
	}()
	p := &Process{PID: cmd.Process.Pid, Socket: socket, done: make(chan struct{})}
	go func() {
		pty.WaitCommand(cmd)
		p.state = cmd.ProcessState
		close(p.done)
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) == "ready" {
			return p, nil
		}
		<-p.done
		if msg := <-why; msg != "" {
			return nil, fmt.Errorf("%w: %s: %s", ErrSpawn, p.state, msg)
		}
		return nil, fmt.Errorf("%w: %s", ErrSpawn, p.state)
	case <-ctx.Done():
		cmd.Process.Kill()
		<-p.done
		return nil, ctx.Err()
	}
}

// envLookup is getenv over an environment list (the last entry wins).
func envLookup(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}
