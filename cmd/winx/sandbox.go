package main

import (
	"errors"
	"fmt"
	"log/slog"

	"winx/guardian"
	"winx/guardian/wire"
	"winx/pty/sandbox"
)

// sandboxArgv returns how session processes are wrapped (on is WINX_SANDBOX,
// as the configuration read it): nil when the sandbox is off, or when it is
// on but this kernel cannot confine shells. In that case a warning with the exact
// reason is logged and shells run unconfined: the sandbox is a defence in
// depth that the user asked for, and refusing to start would leave them with
// no server on an older kernel; the warning says what they do not get.
// A malformed WINX_SANDBOX_RW_PATHS or WINX_SANDBOX_RO_PATHS stops start-up.
func sandboxArgv(on bool, getenv func(string) string, probe func() (int, error), self func() (string, error), logger *slog.Logger) (func(workspace string, own guardian.OwnDirs, argv []string) ([]string, error), error) {
	switch v := getenv(sandbox.EnvNetwork); {
	case v != "" && v != sandbox.NetworkAllow && v != sandbox.NetworkDeny:
		return nil, fmt.Errorf("winx: %s=%q: want %s or %s", sandbox.EnvNetwork, v, sandbox.NetworkAllow, sandbox.NetworkDeny)
	case v == sandbox.NetworkDeny && !on:
		// Asked for and silently not given: refuse instead.
		return nil, fmt.Errorf("winx: %s=%s needs WINX_SANDBOX=1: only a confined session can be denied the network", sandbox.EnvNetwork, v)
	}
	if !on {
		return nil, nil
	}
	abi, err := probe()
	if err != nil {
		reason := err.Error()
		var ue *sandbox.UnavailableError
		if errors.As(err, &ue) {
			reason = ue.Reason
		}
		logger.Warn("WINX_SANDBOX=1 but shells run unconfined", "reason", reason)
		return nil, nil
	}
	// The environment is checked now so that a mistake shows at start-up;
	// each shell's policy is built again with its own workspace.
	p, err := sandbox.PolicyFromEnv("", getenv)
	if err != nil {
		return nil, fmt.Errorf("winx: WINX_SANDBOX: %w", err)
	}
	// The wire secret authenticates every connection to winxd and the
	// guardians (which run unconfined): a shell that could read it could
	// have them run anything. The policy must hide it, in either runtime
	// (a winxd of this installation may be running anyway).
	secret, err := wire.SecretPath(getenv)
	if err != nil {
		return nil, fmt.Errorf("winx: WINX_SANDBOX: %w", err)
	}
	if err := p.MustHide(secret); err != nil {
		return nil, fmt.Errorf("winx: WINX_SANDBOX: %w", err)
	}
	// Nor may it replace the sockets of winxd and the guardians.
	paths, err := wire.Resolve(getenv)
	if err != nil {
		return nil, fmt.Errorf("winx: WINX_SANDBOX: %w", err)
	}
	if err := p.MustNotWrite(paths.Dir); err != nil {
		return nil, fmt.Errorf("winx: WINX_SANDBOX: %w", err)
	}
	exe, err := self()
	if err != nil {
		return nil, fmt.Errorf("winx: WINX_SANDBOX: locate the winx binary for the launcher: %w", err)
	}
	logger.Info("sandbox on: shells are confined with Landlock", "abi", abi, "hidden", p.Home, "rw", p.RW, "ro", p.RO)
	return func(workspace string, own guardian.OwnDirs, argv []string) ([]string, error) {
		p, err := sandbox.PolicyFromEnv(workspace, getenv)
		if err != nil {
			return nil, err
		}
		if err := p.MustHide(secret); err != nil {
			return nil, err
		}
		if err := p.MustNotWrite(paths.Dir); err != nil {
			return nil, err
		}
		// The socket directory holds every guardian's record and jobs
		// record: hidden like the home directory.
		p.Hidden = append(p.Hidden, paths.Dir)
		return sandbox.Launcher(exe, own.Grant(p), argv), nil
	}, nil
}
