// Command winx-guardian owns one logical winx session: its shell on a PTY,
// working directory, output journal and command generations, served over a
// private Unix socket (package guardian/remote). It is started by winxd (or
// remote.Spawn) in a session of its own and outlives the adapters that talk
// to it; it exits when its session is closed or on SIGTERM/SIGINT.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"winx/cmd/internal/buildid"
	"winx/cmd/internal/config"
	"winx/cmd/internal/entry"
	"winx/guardian/remote"
	"winx/pty"
)

func main() {
	// First of all: the sandbox launcher, or an undumpable process.
	entry.Begin("winx-guardian", true)
	limitProcs()
	// An adapter or terminal that vanished must not take the session with
	// it: hang-ups and broken pipes are ignored (writes then fail instead).
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	entry.Exit(err, config.ErrUsage, "winx-guardian:")
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g, err := config.LoadGuardian(args, os.Getenv, stderr)
	// The hand-off variables name the user's principal and project: the
	// shell must not inherit them, whatever the command line said.
	for _, name := range config.GuardianHandoff() {
		os.Unsetenv(name)
	}
	if err != nil {
		return err
	}
	id := buildid.Read()
	if g.Version {
		_, err := fmt.Fprintf(stdout, "winx-guardian %s\n", id)
		return err
	}
	logger := slog.New(slog.DiscardHandler)
	if g.LogFile != "" {
		f, err := os.OpenFile(g.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		logger = slog.New(slog.NewTextHandler(f, nil))
	}
	// The guardian is the subreaper of its session: an orphan of it (a
	// setsid'd daemon whose parent exited) is reparented here, not to
	// init, and dies with the session.
	if err := pty.BecomeSubreaper(ctx); err != nil {
		logger.Warn("not a subreaper: orphans of the session escape to init", "err", err)
	}
	return remote.RunGuardian(ctx, g.Remote, entry.WireBuild(id), logger)
}

// limitProcs runs the guardian's goroutines on one processor unless
// GOMAXPROCS says otherwise. A guardian serves one session and waits on its
// terminal and its socket almost all the time; with a processor per CPU,
// every hand-off between its goroutines (a request to its handler, the
// shell's output to the waiting call) wakes another thread, which on a
// loaded or virtual machine costs more than the work handed off. One
// processor measured 15-25% less guardian CPU per command and about half
// the p99 of a command's round trip (BenchmarkEchoRoundTrip), and one
// guardian per session no longer sizes itself to the whole machine.
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
