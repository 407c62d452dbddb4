package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
)

// DefaultStartTimeout bounds waiting for a winxd that Connect started.
const DefaultStartTimeout = 10 * time.Second

// ErrDaemonStart: winxd was not running and could not be started.
var ErrDaemonStart = errors.New("daemon: winxd did not start")

// MaxStartError bounds what Start keeps of a starting winxd's stderr.
const MaxStartError = 4 << 10

// StartError is a winxd that could not be started.
type StartError struct {
	Bin    string
	Socket string
	Err    error
	// Said is what winxd wrote on stderr before it exited (at most
	// MaxStartError bytes): its own reason, such as a variable out of
	// range. Empty when it did not run or said nothing.
	Said string
}

func (e *StartError) Error() string {
	if e.Said != "" {
		// winxd ran and said why it stopped: that reason, not the
		// binary's whereabouts, is what to fix.
		return fmt.Sprintf("daemon: winxd did not start (binary %s, socket %s): %v: %s", e.Bin, e.Socket, e.Err, e.Said)
	}
	return fmt.Sprintf("daemon: winxd did not start (binary %s, socket %s): %v; set WINXD_BIN, or WINX_RUNTIME=embedded to run sessions in the adapter", e.Bin, e.Socket, e.Err)
}

func (e *StartError) Unwrap() []error { return []error{ErrDaemonStart, e.Err} }

// Client talks to winxd on Socket. Every call opens its own connection, so
// a cancelled call cannot disturb the next one.
type Client struct {
	Socket string
	Hello  wire.Hello // this process's hello
}

// Deadlines of the calls to winxd: a stopped or hung winxd gives an
// *remote.UnresponsiveError within them instead of holding its caller.
const (
	// controlTimeout bounds a hello, a list or a shutdown.
	controlTimeout = 10 * time.Second
	// ensureTimeout bounds an ensure: a spawn, plus the probes and the
	// reclaims of a quota decision.
	ensureTimeout = DefaultSpawnTimeout + 15*time.Second
)

func (c *Client) call(ctx context.Context, method string, params, result any) (wire.Hello, error) {
	budget := controlTimeout
	if method == MethodEnsure {
		budget = ensureTimeout
	}
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	fail := func(err error) error {
		if outer.Err() == nil && ctx.Err() != nil {
			return &remote.UnresponsiveError{Socket: c.Socket, Method: method, After: budget}
		}
		return err
	}
	wc, err := wire.Dial(ctx, c.Socket, c.Hello)
	if err != nil {
		return wire.Hello{}, fail(err)
	}
	defer wc.Close()
	if err := wc.Call(ctx, method, params, result); err != nil {
		return wc.Peer(), fail(fromWireError(err))
	}
	return wc.Peer(), nil
}

// Ensure asks for the guardian of p.Key (see Server.Ensure).
func (c *Client) Ensure(ctx context.Context, p *EnsureParams) (*EnsureResult, error) {
	var r EnsureResult
	if _, err := c.call(ctx, MethodEnsure, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// List returns the guardians winxd discovers, and winxd's hello.
func (c *Client) List(ctx context.Context) (*ListResult, wire.Hello, error) {
	var r ListResult
	peer, err := c.call(ctx, MethodList, struct{}{}, &r)
	if err != nil {
		return nil, peer, err
	}
	return &r, peer, nil
}

// Shutdown asks winxd to exit, leaving its guardians running, and returns
// its hello (whose PID the caller may wait for).
func (c *Client) Shutdown(ctx context.Context, reason string) (wire.Hello, error) {
	return c.call(ctx, MethodShutdown, &ShutdownParams{Reason: reason}, &struct{}{})
}

// Ping says hello and returns winxd's.
func (c *Client) Ping(ctx context.Context) (wire.Hello, error) {
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	wc, err := wire.Dial(ctx, c.Socket, c.Hello)
	if err != nil {
		if outer.Err() == nil && ctx.Err() != nil {
			return wire.Hello{}, &remote.UnresponsiveError{Socket: c.Socket, Method: wire.MethodHello, After: controlTimeout}
		}
		return wire.Hello{}, err
	}
	defer wc.Close()
	return wc.Peer(), nil
}

// StartOptions say how to start winxd when nothing answers.
type StartOptions struct {
	Bin     string        // the winxd binary
	Args    []string      // its arguments
	Env     []string      // its environment; nil means this process's
	Timeout time.Duration // 0 means DefaultStartTimeout
}

// Connect returns a client of the winxd on socket and its hello. When
// nothing listens and so is not nil, it starts winxd (Start) and waits for
// it; two callers racing both end up with the one winxd that took the
// socket.
func Connect(ctx context.Context, socket string, local wire.Hello, so *StartOptions) (*Client, wire.Hello, error) {
	c := &Client{Socket: socket, Hello: local}
	peer, err := c.Ping(ctx)
	if err == nil {
		return c, peer, nil
	}
	if so == nil || !errors.Is(err, wire.ErrNoServer) {
		return nil, wire.Hello{}, err
	}
	peer, err = Start(ctx, socket, local, *so)
	if err != nil {
		return nil, wire.Hello{}, err
	}
	return c, peer, nil
}

// Start starts winxd (with -socket socket) detached from this process (its
// own session, stdin and stdout on /dev/null: a caller killed with SIGKILL
// does not take it along, and it never writes into the caller's pipes) and
// waits until it answers on socket. Its stderr comes to Start until then: a
// winxd that refuses to start says why there, and the StartError carries
// it. Once it answers the read end is closed; winxd ignores SIGPIPE and
// logs to its own file, so a late write fails and nothing else happens.
func Start(ctx context.Context, socket string, local wire.Hello, so StartOptions) (wire.Hello, error) {
	fail := func(err error) (wire.Hello, error) {
		return wire.Hello{}, &StartError{Bin: so.Bin, Socket: socket, Err: err}
	}
	if so.Bin == "" {
		return fail(errors.New("no winxd binary found"))
	}
	timeout := so.Timeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The socket is passed explicitly: winxd must not resolve another one
	// from an environment that differs from the caller's.
	cmd := exec.Command(so.Bin, append([]string{"-socket", socket}, so.Args...)...)
	cmd.Env = so.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	er, ew, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("stderr pipe: %w", err))
	}
	defer er.Close()
	cmd.Stderr = ew
	err = cmd.Start()
	ew.Close()
	if err != nil {
		return fail(err)
	}
	said := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(er, MaxStartError))
		said <- strings.TrimSpace(string(b))
	}()
	exited := make(chan struct{})
	go func() {
		cmd.Wait() // reap it if it exits while we live
		close(exited)
	}()
	c := &Client{Socket: socket, Hello: local}
	delay := 5 * time.Millisecond
	for {
		peer, err := c.Ping(ctx)
		if err == nil {
			return peer, nil
		}
		select {
		case <-exited:
			// It lost a race for the socket to another winxd, or failed:
			// one last look tells which.
			if peer, err := c.Ping(ctx); err == nil {
				return peer, nil
			}
			// Its stderr ended with it (a child of its own that holds
			// the pipe is not waited for).
			var msg string
			select {
			case msg = <-said:
			case <-time.After(time.Second):
			}
			return wire.Hello{}, &StartError{Bin: so.Bin, Socket: socket, Err: fmt.Errorf("it exited: %s", cmd.ProcessState), Said: msg}
		case <-ctx.Done():
			cmd.Process.Signal(os.Interrupt)
			return fail(fmt.Errorf("no answer on the socket within %v: %w", timeout, err))
		case <-time.After(delay):
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}
