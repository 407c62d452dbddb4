// Command winxd is the winx control plane: it discovers the per-session
// guardians from their sockets, spawns new ones for adapters, holds them
// under a quota and sweeps the idle ones (package guardian/daemon). An
// adapter starts it on demand; it runs in a session of its own, and a planned
// stop (SIGTERM, `winx restart-daemon`) leaves every guardian running. It
// watches its guardians and is the child subreaper of those it spawned: a
// guardian that dies leaves nothing of its session running.
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
	"syscall"
	"time"

	"winx/cmd/internal/buildid"
	"winx/cmd/internal/config"
	"winx/cmd/internal/entry"
	"winx/cmd/internal/oplog"
	"winx/guardian/daemon"
	"winx/guardian/wire"
)

func main() {
	// First of all: an undumpable process.
	entry.Begin("winxd", false)
	// The adapter that started winxd may vanish: hang-ups and broken pipes
	// must not end the control plane.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	entry.Exit(err, config.ErrUsage, "winxd:")
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := config.LoadDaemon(args, getenv, stderr)
	id := buildid.Read()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			recordStartFailure(getenv, id, err)
		}
		return err
	}
	if o.Version {
		_, err := fmt.Fprintf(stdout, "winxd %s\n", id)
		return err
	}
	socket, state := o.Socket, o.StateDir
	secret, err := wire.EnsureSecret(o.SecretFile)
	if err != nil {
		return err
	}
	if err := wire.EnsureDir(filepath.Dir(socket)); err != nil {
		return err
	}
	logger := slog.New(slog.DiscardHandler)
	if o.LogFile != "" && o.LogFile != "-" {
		f, err := oplog.OpenFile(o.LogFile, o.LogMaxBytes)
		if err != nil {
			return err
		}
		defer f.Close()
		logger = oplog.New(f, o.Log.Level, o.Log.Format)
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
		GuardianBin:   o.GuardianBin,
		Policy:        daemon.Policy{Max: o.MaxGuardians, NeverUsedTTL: o.NeverUsedTTL, UsedTTL: o.UsedTTL},
		SweepInterval: o.SweepInterval,
		Build:         build,
		Secret:        secret,
		Logger:        logger,
		OnRequest: func(r daemon.Request) {
			oplog.LogDaemonCall(logger, oplog.DaemonCall{
				Method: r.Method, Peer: r.Peer, KeyHash: r.KeyHash, Principal: r.Principal,
				Outcome: r.Outcome, Code: r.Code, Duration: r.Duration, Bytes: r.Bytes,
			})
		},
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
	logger.Info("winxd serving", "socket", socket, "guardian_bin", o.GuardianBin, "max_guardians", o.MaxGuardians,
		"used_ttl", o.UsedTTL, "never_used_ttl", o.NeverUsedTTL, "sweep_interval", o.SweepInterval)
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

// recordStartFailure writes why winxd refused to start (its configuration)
// where an operator looks: winxd.log and, unless a winxd is running, the
// exit record `winx doctor` shows. Its stderr is read only by the adapter
// that started it, until it exits.
func recordStartFailure(getenv func(string) string, id buildid.Identity, cause error) {
	state := daemon.StateDir(getenv)
	if state == "" {
		return
	}
	if f, err := oplog.OpenFile(filepath.Join(state, daemon.LogFileName), config.DefaultDaemonLogMaxBytes); err == nil {
		oplog.New(f, "info", config.LogFormatText).Error("winxd did not start", "err", cause.Error())
		f.Close()
	}
	// A running winxd's record stays: this one never took the socket.
	if r, err := daemon.ReadExitRecord(state); err == nil && r.State == daemon.StateRunning && !daemon.Exited(r.PID) {
		return
	}
	daemon.WriteExitRecord(state, daemon.ExitRecord{
		State: daemon.StateExited, Reason: "start-up: " + cause.Error(), PID: os.Getpid(),
		Time: time.Now().UTC(), Build: entry.WireBuild(id),
	})
}
