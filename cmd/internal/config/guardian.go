package config

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"winx/guardian/remote"
)

// Guardian is winx-guardian's configuration.
type Guardian struct {
	Version bool   // -version: print the build identity and exit
	LogFile string // -log-file; "" means no logs
	// Remote is the session to serve: flags, with the key and paths that
	// flags left empty taken from the hand-off variables (GuardianHandoff).
	Remote remote.Config
}

// GuardianHandoff are the variables through which a spawner hands a
// guardian its session key and paths (see remote.EnvKey). The guardian
// removes them before its shell inherits the environment.
func GuardianHandoff() []string {
	return []string{remote.EnvKey, remote.EnvDir, remote.EnvWorkspace}
}

// LoadGuardian reads winx-guardian's command line (without the program
// name) and environment. A rejected command line returns an error matching
// ErrUsage.
func LoadGuardian(args []string, getenv func(string) string, stderr io.Writer) (*Guardian, error) {
	var g Guardian
	fs := flag.NewFlagSet("winx-guardian", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.Remote.RegisterFlags(fs)
	fs.BoolVar(&g.Version, "version", false, "print the build identity and exit")
	fs.StringVar(&g.LogFile, "log-file", "", "append logs to this file (created 0600); default: no logs")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	for _, v := range []struct {
		name string
		dst  *string
	}{{remote.EnvKey, &g.Remote.Key}, {remote.EnvDir, &g.Remote.Dir}, {remote.EnvWorkspace, &g.Remote.Workspace}} {
		if *v.dst == "" {
			*v.dst = getenv(v.name)
		}
	}
	if g.Version {
		return &g, nil
	}
	if fs.NArg() > 0 || g.Remote.Key == "" || g.Remote.Dir == "" {
		fs.Usage()
		return nil, fmt.Errorf("%w: a key and a directory are required (-key and -dir, or %s and %s), and no arguments", ErrUsage, remote.EnvKey, remote.EnvDir)
	}
	return &g, nil
}
