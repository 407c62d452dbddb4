// Command winx is the Winx MCP adapter: it serves the catalog over stdio (the
// default) or over Streamable HTTP with a bearer token (`winx serve --http`),
// and runs the operator commands of durable sessions (`winx list`, ...) and
// `winx report`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"winx/cmd/internal/buildid"
	"winx/cmd/internal/config"
	"winx/cmd/internal/entry"
	"winx/cmd/internal/oplog"
	"winx/guardian/daemon/operator"
	"winx/guardian/wire"
	"winx/mcp"
	"winx/mcp/httpserve"
	"winx/mcp/tools"
)

// errUsage marks a command line or environment that was rejected and
// already explained.
var errUsage = config.ErrUsage

func main() {
	// First of all: the sandbox launcher, or an undumpable process.
	entry.Begin("winx", true)
	// Then: a re-executed serve reads its credentials, and a first one
	// that holds any in its environment re-executes itself without them
	// (handoff.go). Nothing else has started yet.
	environ, handed, err := inheritedEnviron()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := config.LoadAdapter(os.Args[1:], environ, catalog(), os.Stderr)
	if err == nil {
		err = shedCredentials(cfg, handed)
	}
	if err == nil {
		// The first SIGINT or SIGTERM stops the command gracefully (a
		// stdio server stops reading and lets running calls answer);
		// then the signals are given back their default action, so a
		// second one ends the process at once.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		context.AfterFunc(ctx, func() {
			stop()
			if cfg.Command == config.CommandServe {
				oplog.New(os.Stderr, cfg.Serve.Log.Level, cfg.Serve.Log.Format).
					Info("stopping on a signal; a second one ends the process at once")
			}
		})
		err = runAdapter(ctx, cfg, os.Stdin, os.Stdout, os.Stderr)
		stop()
	}
	// One rule for every failure: `winx: <what>: <why>` on stderr, exit 2
	// for usage and configuration (a variable outside its range, a flag's
	// file that cannot be used), 1 for runtime failures.
	var bad *config.VarError
	var badFile *httpserve.FileFlagError
	if err != nil && !errors.Is(err, errUsage) && (errors.As(err, &bad) || errors.As(err, &badFile)) {
		fmt.Fprintln(os.Stderr, "winx:", strings.TrimPrefix(err.Error(), "winx: "))
		err = errUsage
	}
	entry.Exit(err, errUsage, "winx:")
}

// catalog is what the configuration needs to know of the tool catalog.
func catalog() config.Catalog {
	return config.Catalog{
		Affinities:   []string{tools.AffinityWorkspace, tools.AffinityConversation, tools.AffinityThread},
		MaxBodyBytes: mcp.DefaultMaxBodyBytes,
	}
}

// run is winx with args and this process's environment, as main runs it
// minus the credential handoff (which re-executes the process).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := config.LoadAdapter(args, os.Environ(), catalog(), stderr)
	if err != nil {
		return err
	}
	return runAdapter(ctx, cfg, stdin, stdout, stderr)
}

// runAdapter runs the command cfg configures.
func runAdapter(ctx context.Context, cfg *config.Adapter, stdin io.Reader, stdout, stderr io.Writer) error {
	id := buildid.Read()
	switch cfg.Command {
	case config.CommandHelp:
		args := []string{"--help"}
		if cfg.HelpTopic != "" {
			args = []string{cfg.HelpTopic, "--help"}
		}
		_, err := config.LoadAdapter(args, nil, catalog(), stdout)
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	case config.CommandReport:
		return runReport(cfg.Report, stdout)
	case config.CommandWorktrees:
		return runWorktrees(ctx, cfg.Worktree, stdout)
	case config.CommandServe:
		if cfg.Serve.Version {
			// The identity starts with the module, which is winx.
			fmt.Fprintln(stdout, "winx", strings.TrimPrefix(id.String(), "winx "))
			return nil
		}
		// A token given as --token stays in memory only: the command line
		// is readable by every local user and every session shell.
		cfg.Serve.Token = strings.Clone(cfg.Serve.Token)
		entry.ScrubArgs(cfg.Serve.Token)
		return serve(ctx, &cfg.Serve, id, stdin, stdout, stderr)
	}
	o := cfg.OperatorOptions
	o.Build, o.FormatBuild, o.Stdout = entry.WireBuild(id), formatBuild, stdout
	if f, ok := stdin.(*os.File); ok {
		o.Stdin = f
	}
	return operator.Run(ctx, cfg.Operator, o)
}

// formatBuild renders a peer's build as `winx --version` renders this one.
func formatBuild(b wire.Build) string {
	return buildid.Identity{Module: b.Module, Version: b.Version, Revision: b.Revision, Modified: b.Modified, GoVersion: b.GoVersion}.String()
}
