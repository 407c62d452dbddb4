package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"winx/guardian"
	"winx/guardian/remote"
)

// InteractiveHelp is what `winx help attach` says of --interactive.
const InteractiveHelp = `
With --interactive, the person at this terminal takes the wheel of the
session's live shell: what they type goes to the shell, its output comes
back as it is printed, and the terminal's size follows this one's. The
terminal is put in raw mode and restored on every way out (detach, signal,
a guardian that goes away). While attached, the agent's commands and input
are refused with the status person_attached; after the detach its next
answer says that a person typed in the session and which command lines ran.
Only the session's own user, outside every confined session, can attach
(the guardian's socket and wire secret).

Detach: Ctrl-] then d. Ctrl-] twice sends one Ctrl-] to the shell.
`

// Keys of the detach sequence: detachEscape, then detachKey.
const (
	detachEscape = 0x1d // Ctrl-]
	detachKey    = 'd'
)

// Interactive attach limits.
const (
	personReadWait = 2 * time.Second // one read's wait; well within the lease
	detachTimeout  = 5 * time.Second // the detach call on the way out
	keyBuffer      = 4 << 10         // one read of the terminal
)

// detachScanner finds the detach sequence in the keys typed; an escape key
// at the end of one read waits for the next.
type detachScanner struct{ escaped bool }

// feed returns the bytes to send and whether the detach sequence was typed
// (the bytes before it are sent, the rest dropped).
func (d *detachScanner) feed(b []byte) (send []byte, detach bool) {
	for _, c := range b {
		if d.escaped {
			d.escaped = false
			switch c {
			case detachKey, 'D':
				return send, true
			case detachEscape:
				send = append(send, detachEscape)
			default:
				send = append(send, detachEscape, c)
			}
			continue
		}
		if c == detachEscape {
			d.escaped = true
			continue
		}
		send = append(send, c)
	}
	return send, false
}

// errShellExited ends an attachment whose shell exited.
var errShellExited = errors.New("winx: the session's shell exited (the agent's next command starts a new one)")

// attachInteractive attaches the person at this terminal to the session
// thread names until they detach, a signal comes, or the guardian goes.
func (op *operator) attachInteractive(ctx context.Context, thread string) error {
	in := op.Stdin
	if in == nil || !term.IsTerminal(int(in.Fd())) {
		return errors.New("winx: attach --interactive needs a terminal on stdin")
	}
	fd := int(in.Fd())
	fctx, cancel := context.WithTimeout(ctx, operatorTimeout)
	g, err := op.find(fctx, thread)
	if err != nil {
		cancel()
		return err
	}
	cols, rows, err := term.GetSize(fd)
	if err != nil {
		rows, cols = 0, 0 // the session keeps its size
	}
	pt, err := remote.AttachPerson(fctx, g.Socket, &remote.ClientOptions{Build: op.Build, Secret: op.Secret}, rows, cols)
	cancel()
	switch {
	case errors.Is(err, guardian.ErrPersonAttached):
		return fmt.Errorf("winx: a person is attached to %s already", thread)
	case errors.Is(err, remote.ErrUnsupported):
		return fmt.Errorf("winx: the session's guardian is of an older build without attach --interactive (see `winx list`)")
	case err != nil:
		return err
	}
	// Raw mode from here on; every way out below restores the terminal.
	// The signals that end the process are caught for that: in raw mode
	// Ctrl-C and Ctrl-\ are keys for the shell, so only another process
	// (or a hang-up) sends them.
	sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	old, err := term.MakeRaw(fd)
	if err != nil {
		pt.Close()
		return fmt.Errorf("winx: attach --interactive: raw mode: %w", err)
	}
	restore := sync.OnceFunc(func() { term.Restore(fd, old) })
	defer restore()
	k, _ := g.Session()
	fmt.Fprintf(op.Stdout, "winx: attached to %s; Ctrl-] then d detaches\r\n", k.ExternalID)

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)

	ended := make(chan error, 2)
	lctx, lcancel := context.WithCancel(sctx)
	defer lcancel()
	go func() { // the session's output, to this terminal
		for {
			c, err := pt.Read(lctx, personReadWait)
			if err != nil {
				ended <- err
				return
			}
			if len(c.Data) > 0 {
				if _, err := op.Stdout.Write(c.Data); err != nil {
					ended <- err
					return
				}
			}
			if c.ShellExited {
				ended <- errShellExited
				return
			}
		}
	}()
	go func() { // this terminal's keys, to the session
		var d detachScanner
		buf := make([]byte, keyBuffer)
		for {
			n, err := in.Read(buf)
			if err != nil {
				ended <- err
				return
			}
			send, detach := d.feed(buf[:n])
			if len(send) > 0 {
				if err := pt.Write(lctx, send); err != nil {
					ended <- err
					return
				}
			}
			if detach {
				ended <- nil
				return
			}
		}
	}()

	var why error
loop:
	for {
		select {
		case <-winch:
			if c, r, err := term.GetSize(fd); err == nil {
				pt.Resize(lctx, r, c)
			}
		case why = <-ended:
			break loop
		case <-sctx.Done():
			break loop
		}
	}
	lcancel()
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), detachTimeout)
	derr := pt.Detach(dctx)
	dcancel()
	restore()
	switch {
	case errors.Is(why, errShellExited):
		fmt.Fprintf(op.Stdout, "\r\n%v\n", why)
		return nil
	case why != nil && !errors.Is(why, context.Canceled):
		fmt.Fprintln(op.Stdout)
		return fmt.Errorf("winx: attach --interactive: %w", why)
	case derr != nil && !errors.Is(derr, guardian.ErrNotAttached):
		fmt.Fprintln(op.Stdout)
		return fmt.Errorf("winx: detach: %w", derr)
	}
	fmt.Fprintf(op.Stdout, "\r\nwinx: detached from %s\n", k.ExternalID)
	return nil
}
