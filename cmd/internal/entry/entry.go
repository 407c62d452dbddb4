// Package entry holds what the mains of winx, winxd and winx-guardian share:
// the first step of a main (Begin), how a run's error becomes an exit
// status, where a sibling binary is found and how the build identity goes
// on the wire.
package entry

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"winx/cmd/internal/buildid"
	"winx/guardian/wire"
)

// Exit ends the process for the error run returned: 0 for none or -help, 2
// for usage (already explained), else 1 after printing err to stderr, after
// prefix when it is not empty and err does not start with it already.
func Exit(err, usage error, prefix string) {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, usage):
		os.Exit(2)
	case prefix != "" && !strings.HasPrefix(err.Error(), prefix):
		fmt.Fprintln(os.Stderr, prefix, err)
	default:
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(1)
}

// SiblingBinary is override when set, else name next to this executable,
// else name (looked up on PATH when started).
func SiblingBinary(override, name string) string {
	if override != "" {
		return override
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return name
}

// WireBuild is id as a hello carries it.
func WireBuild(id buildid.Identity) wire.Build {
	return wire.Build{Module: id.Module, Version: id.Version, Revision: id.Revision, Modified: id.Modified, GoVersion: id.GoVersion}
}
