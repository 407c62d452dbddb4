// Command winxd is the winx control plane: it discovers the per-session
// guardians from their sockets, spawns new ones for adapters, holds them
// under a quota and sweeps the idle ones (package guardian/daemon). An
// adapter starts it on demand; it runs in a session of its own, and a planned
// stop (SIGTERM, `winx restart-daemon`) leaves every guardian running.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"winx/cmd/internal/buildid"
	"winx/cmd/internal/entry"
	"winx/guardian/daemon"
	"winx/guardian/wire"
)

func main() {
	// The adapter that started winxd may vanish: hang-ups and broken pipes
	// must not end the control plane.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	entry.Exit(err, errUsage, "winxd:")
}

var errUsage = errors.New("usage")

type options struct {
	version       bool
	socket        string
	logFile       string
	guardianBin   string
	maxGuardians  int
	sweepInterval time.Duration
	neverUsedTTL  time.Duration
	usedTTL       time.Duration
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("winxd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.version, "version", false, "print the build identity and exit")
	fs.StringVar(&o.socket, "socket", "", "winxd's socket (default: WINX_SOCKET, else the resolved runtime directory)")
	fs.StringVar(&o.logFile, "log-file", "", "append logs to this file, created 0600 (default: winxd.log in the state directory; \"-\" for none)")
	fs.StringVar(&o.guardianBin, "guardian-bin", "", "winx-guardian binary (default: WINX_GUARDIAN_BIN, else next to winxd)")
	fs.IntVar(&o.maxGuardians, "max-guardians", 0, "guardian quota (default: WINX_MAX_GUARDIANS, else 32)")
	fs.DurationVar(&o.sweepInterval, "sweep-interval", daemon.DefaultSweepInterval, "how often idle guardians are swept")
	fs.DurationVar(&o.neverUsedTTL, "never-used-ttl", daemon.DefaultNeverUsedTTL, "idle time after which a guardian that never ran a command ends")
	fs.DurationVar(&o.usedTTL, "used-ttl", daemon.DefaultUsedTTL, "idle time after which a guardian that ran a command ends")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	id := buildid.Read()
	if o.version {
		_, err := fmt.Fprintf(stdout, "winxd %s\n", id)
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if o.maxGuardians == 0 {
		if v := getenv("WINX_MAX_GUARDIANS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("WINX_MAX_GUARDIANS must be a positive integer, got %q", v)
			}
			o.maxGuardians = n
		}
	}
	socket := o.socket
	if socket == "" {
		paths, err := wire.Resolve(getenv)
		if err != nil {
			return err
		}
		socket = paths.Daemon
	}
	if !filepath.IsAbs(socket) {
		return fmt.Errorf("%w: -socket must be absolute", errUsage)
	}
	if err := wire.EnsureDir(filepath.Dir(socket)); err != nil {
		return err
	}
	if o.guardianBin == "" {
		o.guardianBin = entry.SiblingBinary(getenv("WINX_GUARDIAN_BIN"), "winx-guardian")
	}
	state := daemon.StateDir(getenv)
	logger := slog.New(slog.DiscardHandler)
	if o.logFile == "" && state != "" {
		o.logFile = filepath.Join(state, daemon.LogFileName)
	}
	if o.logFile != "" && o.logFile != "-" {
		f, err := daemon.OpenLog(o.logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		logger = slog.New(slog.NewTextHandler(f, nil))
	}
	build := entry.WireBuild(id)
	// The socket first: a second winxd (two adapters starting one at once)
	// stops here without touching the first one's exit record.
	ln, err := wire.Listen(socket)
	if err != nil {
		return err
	}
	srv := daemon.NewServer(daemon.Options{
		Dir:           filepath.Dir(socket),
		GuardianBin:   o.guardianBin,
		Policy:        daemon.Policy{Max: o.maxGuardians, NeverUsedTTL: o.neverUsedTTL, UsedTTL: o.usedTTL},
		SweepInterval: o.sweepInterval,
		Build:         build,
		Logger:        logger,
	})
	writeRecord := func(st, reason string) {
		if state == "" {
			return
		}
		if err := daemon.WriteExitRecord(state, daemon.ExitRecord{
			State: st, Reason: reason, PID: os.Getpid(), Time: time.Now().UTC(), Build: build,
		}); err != nil {
			logger.Warn("exit record", "err", err)
		}
	}
	writeRecord(daemon.StateRunning, "")
	logger.Info("winxd serving", "socket", socket, "guardian_bin", o.guardianBin, "max_guardians", o.maxGuardians)
	reason, err := srv.Run(ctx, ln)
	switch {
	case err != nil:
		reason = "error: " + err.Error()
	case ctx.Err() != nil:
		reason = "signal: stopped by SIGTERM or SIGINT"
	}
	logger.Info("winxd stopping; guardians keep running", "reason", reason)
	writeRecord(daemon.StateExited, reason)
	return err
}
