// Command winxd is the winx control plane: it discovers, spawns and sweeps the
// per-session guardians. Until the durable sessions work lands it only reports
// its build identity; every other invocation says so and exits 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"winx/cmd/internal/buildid"
)

const (
	name = "winxd"
	role = "control plane"
)

// errNotImplemented is returned by run for everything but --version; main
// exits 2 on it without printing it again.
var errNotImplemented = errors.New(name + ": not implemented yet: the durable daemon arrives with the durable sessions work")

// errUsage marks a command line that run rejected after flag parsing.
var errUsage = errors.New(name + ": usage")

type options struct {
	version bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode maps run's result to the process exit status, printing the error
// when run has not already explained it.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errNotImplemented), errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opts options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [--version]\n\nThe winx %s. Not implemented yet; only --version works.\n\n", name, role)
		fs.PrintDefaults()
	}
	fs.BoolVar(&opts.version, "version", false, "print the build identity and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		// The flag package has already printed the error and the usage.
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		fs.Usage()
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}

	id := buildid.Read()
	if opts.version {
		_, err := fmt.Fprintf(stdout, "%s %s\n", name, id)
		return err
	}
	fmt.Fprintf(stderr, "%s: role %s, version %s\n%v\n", name, role, id, errNotImplemented)
	return errNotImplemented
}
