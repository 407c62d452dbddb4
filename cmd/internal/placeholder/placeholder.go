// Package placeholder is the shared main of binaries whose role is named but
// not built yet (winxd, winx-guardian until the durable sessions work): they
// report their role and exact build identity and refuse everything else with
// exit status 2, so nothing can mistake them for a working daemon.
package placeholder

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

// Sentinel errors of Run; Main exits 2 on both without printing them again.
var (
	ErrNotImplemented = errors.New("not implemented yet: the durable daemon arrives with the durable sessions work")
	ErrUsage          = errors.New("usage")
)

// Command names a binary and its role.
type Command struct {
	Name string // e.g. "winxd"
	Role string // e.g. "control plane"
}

// Main runs the command on the process's arguments and exits.
func (c Command) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := c.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrNotImplemented), errors.Is(err, ErrUsage):
		return 2
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}

// Run supports only --version (and -h); anything else explains the role and
// returns ErrNotImplemented or ErrUsage.
func (c Command) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var version bool
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [--version]\n\nThe winx %s. Not implemented yet; only --version works.\n\n", c.Name, c.Role)
		fs.PrintDefaults()
	}
	fs.BoolVar(&version, "version", false, "print the build identity and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		// The flag package has already printed the error and the usage.
		return fmt.Errorf("%s: %w: %v", c.Name, ErrUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", c.Name, fs.Arg(0))
		fs.Usage()
		return fmt.Errorf("%s: %w: unexpected argument %q", c.Name, ErrUsage, fs.Arg(0))
	}
	id := buildid.Read()
	if version {
		_, err := fmt.Fprintf(stdout, "%s %s\n", c.Name, id)
		return err
	}
	fmt.Fprintf(stderr, "%s: role %s, version %s\n%s: %v\n", c.Name, c.Role, id, c.Name, ErrNotImplemented)
	return ErrNotImplemented
}
