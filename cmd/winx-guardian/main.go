// Command winx-guardian owns one logical winx session: its shell on a PTY,
// working directory, output journal and command generations, served over a
// private Unix socket (package guardian/remote). It is started by winxd (or
// remote.Spawn) in a session of its own and outlives the adapters that talk
// to it; it exits when its session is closed or on SIGTERM/SIGINT.
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
	"syscall"

	"winx/cmd/internal/buildid"
	"winx/cmd/internal/entry"
	"winx/guardian/remote"
	"winx/pty/sandbox"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		// The Landlock launcher of a -sandbox guardian: it confines its own
		// thread and becomes the shell, so it runs before anything else.
		err := sandbox.RunLauncher(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	// An adapter or terminal that vanished must not take the session with
	// it: hang-ups and broken pipes are ignored (writes then fail instead).
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	entry.Exit(err, errUsage, "winx-guardian:")
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		cfg     remote.Config
		version bool
		logFile string
	)
	fs := flag.NewFlagSet("winx-guardian", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.RegisterFlags(fs)
	fs.BoolVar(&version, "version", false, "print the build identity and exit")
	fs.StringVar(&logFile, "log-file", "", "append logs to this file (created 0600); default: no logs")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	cfg.TakeEnviron()
	id := buildid.Read()
	if version {
		_, err := fmt.Fprintf(stdout, "winx-guardian %s\n", id)
		return err
	}
	if fs.NArg() > 0 || cfg.Key == "" || cfg.Dir == "" {
		fs.Usage()
		return fmt.Errorf("%w: a key and a directory are required (-key and -dir, or %s and %s), and no arguments", errUsage, remote.EnvKey, remote.EnvDir)
	}
	logger := slog.New(slog.DiscardHandler)
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		logger = slog.New(slog.NewTextHandler(f, nil))
	}
	return remote.RunGuardian(ctx, cfg, entry.WireBuild(id), logger)
}
