package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Bounds of WINX_MAX_GUARDIANS (and winxd's -max-guardians): one session
// at least, and no more guardian processes than one user's process and
// socket budget can carry on an ordinary machine.
const (
	MinGuardians = 1
	MaxGuardians = 4096
)

// Bounds of WINX_READ_PARALLELISM: concurrent file reads of one ReadFiles.
const (
	MinReadParallelism = 1
	MaxReadParallelism = 32
)

// MaxTokenBudget bounds the ReadFiles token budgets: far beyond any model's
// context, small enough that byte arithmetic on it cannot overflow.
const MaxTokenBudget = 1 << 30

// MaxKeepDays bounds WINX_USAGE_LOG_KEEP_DAYS (a hundred years).
const MaxKeepDays = 36500

// MaxTTLSecs bounds the idle TTL and sweep variables (ten years): a larger
// value cannot be told from "disabled" and would overflow time.Duration.
const MaxTTLSecs = 10 * 365 * 24 * 3600

// Disabled is the duration a TTL tier or the sweep gets when its variable
// is 0: longer than any process lives, so that tier never expires anyone.
// The daemon's policy treats 0 as "the default", hence a finite value here
// rather than 0.
const Disabled = time.Duration(1<<62 - 1)

// ErrOutOfRange is the cause of a VarError whose value is outside the
// documented range.
var ErrOutOfRange = errors.New("out of range")

// Values of WINX_LOG_FORMAT.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// Log is the operational log's configuration (WINX_LOG, WINX_LOG_FORMAT),
// shared by winx serve and winxd.
type Log struct {
	Level  string // WINX_LOG: debug, info (default), warn, error or off
	Format string // WINX_LOG_FORMAT: LogFormatText (default) or LogFormatJSON
}

// LoadLog reads WINX_LOG and WINX_LOG_FORMAT; when WINX_LOG is unset, the
// level comes from RUST_LOG (RustLogLevel), which every client recipe of
// the Rust Winx sets. An unknown value is a *VarError naming the variable.
func LoadLog(getenv func(string) string) (Log, error) {
	l := Log{Level: strings.ToLower(getenv("WINX_LOG")), Format: strings.ToLower(getenv("WINX_LOG_FORMAT"))}
	if l.Level == "" && strings.TrimSpace(getenv("RUST_LOG")) != "" {
		level, err := RustLogLevel(getenv("RUST_LOG"))
		if err != nil {
			return l, &VarError{Name: "RUST_LOG", Value: getenv("RUST_LOG"), Err: err}
		}
		l.Level = level
	}
	switch l.Level {
	case "":
		l.Level = "info"
	case "debug", "info", "warn", "error", "off":
	default:
		return l, &VarError{Name: "WINX_LOG", Value: getenv("WINX_LOG"), Err: errors.New("not debug, info, warn, error or off")}
	}
	switch l.Format {
	case "":
		l.Format = LogFormatText
	case LogFormatText, LogFormatJSON:
	default:
		return l, &VarError{Name: "WINX_LOG_FORMAT", Value: getenv("WINX_LOG_FORMAT"), Err: errors.New("not json or text")}
	}
	return l, nil
}

// ErrRustLog is the cause of a RUST_LOG directive whose level is not
// trace, debug, info, warn, error or off.
var ErrRustLog = errors.New("a directive's level is not trace, debug, info, warn, error or off")

// rustLevels maps the levels of a RUST_LOG directive to WINX_LOG's, by
// verbosity (trace has no level of its own here: it is debug).
var rustLevels = map[string]struct {
	level     string
	verbosity int
}{
	"off": {"off", 0}, "error": {"error", 1}, "warn": {"warn", 2}, "info": {"info", 3},
	"debug": {"debug", 4}, "trace": {"debug", 5},
}

// RustLogLevel reduces a RUST_LOG value (comma-separated directives:
// "level", "target=level" or a bare "target", which means trace for it) to
// the one level of winx's log: the last bare level if there is one (the
// default of every target); else the level of a target naming winx (its
// first path element contains "winx": winx, winx_code_agent, winx::usage);
// else the most verbose level given. Span filters ("target[span]=level")
// count by their target. A directive with an unknown level is an error
// wrapping ErrRustLog.
func RustLogLevel(v string) (string, error) {
	var bare, winx, most string
	mostV := -1
	for _, d := range strings.Split(v, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		target, lvl, hasLevel := "", d, false
		if i := strings.LastIndexByte(d, '='); i >= 0 {
			target, lvl, hasLevel = d[:i], d[i+1:], true
		}
		r, ok := rustLevels[strings.ToLower(strings.TrimSpace(lvl))]
		switch {
		case !hasLevel && ok:
			bare = r.level
			continue
		case !hasLevel:
			target, r = d, rustLevels["trace"] // a bare target enables all of it
		case !ok:
			return "", fmt.Errorf("%w: %q", ErrRustLog, d)
		}
		if i := strings.IndexByte(target, '['); i >= 0 {
			target = target[:i]
		}
		first, _, _ := strings.Cut(target, "::")
		if strings.Contains(strings.ToLower(first), "winx") {
			winx = r.level
		}
		if r.verbosity > mostV {
			most, mostV = r.level, r.verbosity
		}
	}
	switch {
	case bare != "":
		return bare, nil
	case winx != "":
		return winx, nil
	}
	return most, nil
}

// ParseRange parses the integer variable name within [min, max]; set is
// false for the empty value.
func ParseRange(name, value string, min, max int) (n int, set bool, err error) {
	n, set, err = ParseInt(name, value, min)
	if err == nil && n > max {
		return 0, false, &VarError{Name: name, Value: value, Err: fmt.Errorf("%w: above %d", ErrOutOfRange, max)}
	}
	return n, set, err
}

// ttlVar reads a seconds variable of the idle policy: unset keeps def, 0
// is Disabled, a positive value is that many seconds.
func ttlVar(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	n, set, err := ParseRange(name, getenv(name), 0, MaxTTLSecs)
	switch {
	case err != nil:
		return 0, err
	case !set:
		return def, nil
	case n == 0:
		return Disabled, nil
	}
	return time.Duration(n) * time.Second, nil
}

// Shell names WINX_SHELL accepts, besides absolute paths whose base name is
// one of them.
const (
	ShellBash = "bash"
	ShellZsh  = "zsh"
)

// ErrShellUnknown is the cause of a VarError for a WINX_SHELL that is
// neither bash nor zsh (by name or by an absolute path's base name).
var ErrShellUnknown = errors.New("not bash, zsh, or an absolute path to one of them")

// Shell is the resolved WINX_SHELL: what the runtime is asked to start, and
// the warning Initialize repeats when the shell asked for is missing.
type Shell struct {
	Name    string // ShellBash, ShellZsh, or an absolute path to one of them
	Warning string // "" unless the asked shell was replaced by bash
}

// ResolveShell resolves WINX_SHELL (value) with lookPath (exec.LookPath in
// the mains). bash is the default. A zsh that cannot be found, by name or
// absolute path, falls back to bash with a warning: the session still
// starts, and the model is told which shell it got. A bash that cannot be
// found, or a name that is neither, is an error: there is nothing to fall
// back to.
func ResolveShell(value string, lookPath func(string) (string, error)) (Shell, error) {
	if value == "" {
		return Shell{Name: ShellBash}, nil
	}
	base := value
	if strings.ContainsRune(value, '/') {
		if !filepath.IsAbs(value) {
			return Shell{}, &VarError{Name: "WINX_SHELL", Value: value, Err: ErrShellUnknown}
		}
		base = filepath.Base(value)
	}
	if base != ShellBash && base != ShellZsh {
		return Shell{}, &VarError{Name: "WINX_SHELL", Value: value, Err: ErrShellUnknown}
	}
	if _, err := lookPath(value); err != nil {
		if base == ShellBash {
			return Shell{}, &VarError{Name: "WINX_SHELL", Value: value, Err: err}
		}
		return Shell{Name: ShellBash, Warning: fmt.Sprintf("WINX_SHELL=%s asked for zsh, which is not available here (%v); sessions run bash instead.", value, err)}, nil
	}
	return Shell{Name: value}, nil
}
