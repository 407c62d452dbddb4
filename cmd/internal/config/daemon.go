package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"winx/cmd/internal/entry"
	"winx/guardian/daemon"
	"winx/guardian/wire"
)

// DefaultDaemonLogMaxBytes is the size of winxd's log file at which it is
// rotated; MinDaemonLogMaxBytes the smallest cap accepted, so that one
// line always fits.
const (
	DefaultDaemonLogMaxBytes = 8 << 20
	MinDaemonLogMaxBytes     = 4 << 10
)

// Daemon is winxd's configuration.
type Daemon struct {
	Version       bool   // -version: print the build identity and exit; nothing below is read
	Socket        string // absolute: -socket, else WINX_SOCKET, else the resolved runtime directory's
	LogFile       string // -log-file, else winxd.log in StateDir; "-" or "" for none
	GuardianBin   string // -guardian-bin, else WINX_GUARDIAN_BIN, else winx-guardian next to winxd
	MaxGuardians  int    // -max-guardians, else WINX_MAX_GUARDIANS; 0 means the default
	SweepInterval time.Duration
	NeverUsedTTL  time.Duration
	UsedTTL       time.Duration
	StateDir      string // exit record and default log; "" means none
	// Log is WINX_LOG and WINX_LOG_FORMAT; LogMaxBytes caps the log file,
	// which is rotated to LogFile+".1" (one old file kept) when full.
	Log         Log
	LogMaxBytes int64
	// SecretFile is the wire secret's file (wire.SecretPath), created by
	// winxd when missing; every peer's hello must carry its secret.
	SecretFile string
}

// LoadDaemon reads winxd's command line (without the program name) and
// environment. A rejected command line returns an error matching ErrUsage.
func LoadDaemon(args []string, getenv func(string) string, stderr io.Writer) (*Daemon, error) {
	var d Daemon
	// refuse explains a rejected command line on stderr, where the adapter
	// that starts winxd reads it, and returns the usage error.
	refuse := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "winxd: "+format+"\n", args...)
		return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, args...)...)
	}
	fs := flag.NewFlagSet("winxd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&d.Version, "version", false, "print the build identity and exit")
	fs.StringVar(&d.Socket, "socket", "", "winxd's socket (default: WINX_SOCKET, else the resolved runtime directory)")
	fs.StringVar(&d.LogFile, "log-file", "", "append logs to this file, created 0600 (default: winxd.log in the state directory; \"-\" for none)")
	fs.StringVar(&d.GuardianBin, "guardian-bin", "", "winx-guardian binary (default: WINX_GUARDIAN_BIN, else next to winxd)")
	fs.IntVar(&d.MaxGuardians, "max-guardians", 0, "guardian quota (default: WINX_MAX_GUARDIANS, else 32)")
	fs.DurationVar(&d.SweepInterval, "sweep-interval", daemon.DefaultSweepInterval, "how often idle guardians are swept (default: WINX_GUARDIAN_SWEEP_INTERVAL_SECS, else 60s)")
	fs.DurationVar(&d.NeverUsedTTL, "never-used-ttl", daemon.DefaultNeverUsedTTL, "idle time after which a guardian that never ran a command ends (default: WINX_UNUSED_SESSION_IDLE_TTL_SECS, else 30m)")
	fs.DurationVar(&d.UsedTTL, "used-ttl", daemon.DefaultUsedTTL, "idle time after which a guardian that ran a command ends (default: WINX_SESSION_IDLE_TTL_SECS, else 24h)")
	fs.Int64Var(&d.LogMaxBytes, "log-max-bytes", DefaultDaemonLogMaxBytes, "size at which the log file is rotated to <log-file>.1")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if d.Version {
		return &d, nil
	}
	if fs.NArg() > 0 {
		return nil, refuse("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["max-guardians"] {
		if d.MaxGuardians < MinGuardians || d.MaxGuardians > MaxGuardians {
			return nil, refuse("-max-guardians must be %d to %d", MinGuardians, MaxGuardians)
		}
	} else {
		v := getenv("WINX_MAX_GUARDIANS")
		n, _, err := ParseRange("WINX_MAX_GUARDIANS", v, MinGuardians, MaxGuardians)
		if err != nil {
			return nil, fmt.Errorf("WINX_MAX_GUARDIANS must be an integer from %d to %d, got %q", MinGuardians, MaxGuardians, v)
		}
		d.MaxGuardians = n
	}
	// The idle policy's variables reach winxd through the environment
	// of the adapter that starts it; a flag given explicitly wins.
	for _, v := range []struct {
		flag, name string
		dst        *time.Duration
	}{
		{"sweep-interval", "WINX_GUARDIAN_SWEEP_INTERVAL_SECS", &d.SweepInterval},
		{"never-used-ttl", "WINX_UNUSED_SESSION_IDLE_TTL_SECS", &d.NeverUsedTTL},
		{"used-ttl", "WINX_SESSION_IDLE_TTL_SECS", &d.UsedTTL},
	} {
		if set[v.flag] {
			continue
		}
		t, err := ttlVar(getenv, v.name, *v.dst)
		if err != nil {
			return nil, err
		}
		*v.dst = t
	}
	if d.LogMaxBytes < MinDaemonLogMaxBytes {
		return nil, refuse("-log-max-bytes must be at least %d", MinDaemonLogMaxBytes)
	}
	log, err := LoadLog(getenv)
	if err != nil {
		return nil, err
	}
	d.Log = log
	if d.Socket == "" {
		paths, err := wire.Resolve(getenv)
		if err != nil {
			return nil, err
		}
		d.Socket = paths.Daemon
	}
	if !filepath.IsAbs(d.Socket) {
		return nil, refuse("-socket must be absolute")
	}
	if d.GuardianBin == "" {
		d.GuardianBin = entry.SiblingBinary(getenv("WINX_GUARDIAN_BIN"), "winx-guardian")
	}
	d.StateDir = daemon.StateDir(getenv)
	secret, err := wire.SecretPath(getenv)
	if err != nil {
		return nil, err
	}
	d.SecretFile = secret
	if d.LogFile == "" && d.StateDir != "" {
		d.LogFile = filepath.Join(d.StateDir, daemon.LogFileName)
	}
	return &d, nil
}
