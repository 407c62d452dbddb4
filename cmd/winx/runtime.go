package main

import (
	"winx/cmd/internal/buildid"
	"winx/cmd/internal/config"
	"winx/cmd/internal/entry"
	"winx/guardian/daemon"
	"winx/guardian/wire"
	"winx/mcp/session"
	"winx/mcp/tools"
)

// shellRuntime returns the ShellFactory of the selected runtime. The daemon
// runtime starts nothing yet: the first session asks winxd (starting it),
// and a winxd that cannot start fails that Initialize with an error naming
// WINXD_BIN and WINX_RUNTIME=embedded; it never falls back silently, since
// sessions that quietly die with the adapter are what the user opted out of.
// With the sandbox on (o.Sandbox), the guardians confine their shells
// themselves, with the same Landlock policy.
func shellRuntime(o tools.RuntimeOptions, c *config.Serve, id buildid.Identity) (session.ShellFactory, error) {
	if c.Runtime == config.RuntimeEmbedded {
		return tools.EmbeddedShells(o), nil
	}
	paths, err := wire.Resolve(c.Getenv)
	if err != nil {
		return nil, err
	}
	return tools.DaemonShells(tools.DaemonOptions{
		RuntimeOptions: o,
		Socket:         paths.Daemon,
		Start:          &daemon.StartOptions{Bin: c.WinxdBin, Env: c.ShellEnv},
		Build:          entry.WireBuild(id),
	})
}
