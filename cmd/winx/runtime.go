package main

import (
	"winx/cmd/internal/buildid"
	"winx/cmd/internal/config"
	"winx/cmd/internal/entry"
	"winx/guardian/daemon"
	"winx/guardian/runtime"
	"winx/guardian/wire"
)

// shellRuntime returns the shell factory of the selected runtime. The daemon
// runtime starts nothing yet: the first session asks winxd (starting it),
// and a winxd that cannot start fails that Initialize with an error naming
// WINXD_BIN and WINX_RUNTIME=embedded; it never falls back silently, since
// sessions that quietly die with the adapter are what the user opted out of.
// With the sandbox on (o.Sandbox), the guardians confine their shells
// themselves, with the same Landlock policy.
func shellRuntime(o runtime.Options, c *config.Serve, id buildid.Identity) (runtime.Factory, error) {
	if c.Runtime == config.RuntimeEmbedded {
		return runtime.Embedded(o), nil
	}
	paths, err := wire.Resolve(c.Getenv)
	if err != nil {
		return nil, err
	}
	// The wire secret authenticates this adapter to winxd and the
	// guardians; the first process of an installation creates it.
	secretFile, err := wire.SecretPath(c.Getenv)
	if err != nil {
		return nil, err
	}
	secret, err := wire.EnsureSecret(secretFile)
	if err != nil {
		return nil, err
	}
	return runtime.Daemon(runtime.DaemonOptions{
		Options: o,
		Socket:  paths.Daemon,
		Start:   &daemon.StartOptions{Bin: c.WinxdBin, Env: c.ShellEnv},
		Build:   entry.WireBuild(id),
		Secret:  secret,
	})
}
