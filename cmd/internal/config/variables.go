package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"winx/guardian/daemon/operator"
)

// Variable documents one environment variable: the README's table and
// `winx doctor`'s configuration section are both checked against this list.
type Variable struct {
	Name    string
	Default string // as the README shows it; "" means unset
	Range   string // accepted values
	// Secret values are never shown: doctor says only whether they are set.
	Secret bool
	// Opaque values (free text an operator wrote) are shown by length.
	Opaque bool
	// Check, when not nil, rejects a set value outside Range with a
	// *VarError; doctor shows its message as a warning, and the process
	// that reads the variable refuses to start.
	Check func(name, value string) error
}

// intRange checks an integer variable against [min, max].
func intRange(min, max int) func(name, value string) error {
	return func(name, value string) error {
		_, _, err := ParseRange(name, value, min, max)
		return err
	}
}

// absolute checks a path variable that must be absolute.
func absolute(name, value string) error {
	if !filepath.IsAbs(value) {
		return &VarError{Name: name, Value: value, Err: errors.New("not an absolute path")}
	}
	return nil
}

// boolean checks a boolean variable.
func boolean(name, value string) error {
	_, err := ParseBool(name, value)
	return err
}

// CheckVariables checks every set variable of Variables that has a Check
// and returns the first error, naming the variable.
func CheckVariables(getenv func(string) string) error {
	for _, v := range Variables() {
		if val := getenv(v.Name); val != "" && v.Check != nil {
			if err := v.Check(v.Name, val); err != nil {
				return err
			}
		}
	}
	return nil
}

// Variables lists every variable winx, winxd and winx-guardian read.
func Variables() []Variable {
	return []Variable{
		{Name: "WINX_SHELL", Default: "bash", Range: "bash, zsh, or an absolute path to one of them; a missing zsh falls back to bash with a warning"},
		{Name: "WINX_SHELL_ARGS", Range: fmt.Sprintf("up to %d whitespace-separated shell options, %d bytes each, that leave a session working (--login and -l included)", 32, 256)},
		{Name: "WINX_RUNTIME", Default: RuntimeDaemon, Range: RuntimeDaemon + " or " + RuntimeEmbedded},
		{Name: "WINX_EMBEDDED", Default: "false", Range: "boolean", Check: boolean},
		{Name: "WINX_NO_REDACT", Default: "false", Range: "boolean", Check: boolean},
		{Name: "WINX_NO_COMPRESS", Default: "false", Range: "boolean", Check: boolean},
		{Name: "WINX_KEEP_TAIL_PIPE", Default: "false", Range: "boolean", Check: boolean},
		{Name: "WINX_OPEN_CONTEXT", Default: "false", Range: "boolean", Check: boolean},
		{Name: "WINX_TURN_RECOGNIZER_CONFIG", Range: "JSON {\"busy\", \"awaiting_input\", \"awaiting_approval\"} lists of substrings or `re:` regular expressions", Opaque: true},
		{Name: "WINX_ALLOW_PATHS", Range: "`:`-separated absolute directories; `/` means unconfined"},
		{Name: "WINX_CODING_TOKEN_BUDGET", Default: "24000", Range: "positive integer", Check: intRange(1, MaxTokenBudget)},
		{Name: "WINX_NONCODING_TOKEN_BUDGET", Default: "8000", Range: "positive integer", Check: intRange(1, MaxTokenBudget)},
		{Name: "WINX_READ_PARALLELISM", Default: "4", Range: fmt.Sprintf("%d to %d", MinReadParallelism, MaxReadParallelism), Check: intRange(MinReadParallelism, MaxReadParallelism)},
		{Name: "WINX_SANDBOX", Default: "false", Range: "boolean", Check: boolean},
		{Name: "WINX_SANDBOX_RW_PATHS", Range: "`:`-separated absolute existing paths"},
		{Name: "WINX_SANDBOX_RO_PATHS", Range: "`:`-separated absolute existing paths"},
		{Name: "WINX_SANDBOX_NETWORK", Default: "allow", Range: "allow or deny"},
		{Name: "WINXD_BIN", Default: "winxd next to winx, else on PATH", Range: "path"},
		{Name: "WINX_GUARDIAN_BIN", Default: "winx-guardian next to winxd, else on PATH", Range: "path"},
		{Name: "WINX_SOCKET", Default: "$XDG_RUNTIME_DIR/winx/winxd.sock", Range: "absolute path", Check: absolute},
		{Name: "WINX_MAX_GUARDIANS", Default: "32", Range: fmt.Sprintf("%d to %d", MinGuardians, MaxGuardians), Check: intRange(MinGuardians, MaxGuardians)},
		{Name: "WINX_SESSION_IDLE_TTL_SECS", Default: "86400", Range: "0 (never) to 315360000", Check: intRange(0, MaxTTLSecs)},
		{Name: "WINX_UNUSED_SESSION_IDLE_TTL_SECS", Default: "1800", Range: "0 (never) to 315360000", Check: intRange(0, MaxTTLSecs)},
		{Name: "WINX_GUARDIAN_SWEEP_INTERVAL_SECS", Default: "60", Range: "0 (no sweep) to 315360000", Check: intRange(0, MaxTTLSecs)},
		{Name: "WINX_SERVER_INSTRUCTIONS", Range: "text", Opaque: true},
		{Name: "WINX_LOG", Default: "info", Range: "debug, info, warn, error or off"},
		{Name: "RUST_LOG", Range: "a level or target=level directives (the Rust Winx's); read only when WINX_LOG is unset", Check: func(name, value string) error {
			if _, err := RustLogLevel(value); err != nil {
				return &VarError{Name: name, Value: value, Err: err}
			}
			return nil
		}},
		{Name: "WINX_LOG_FORMAT", Default: LogFormatText, Range: "text or json"},
		{Name: "WINX_HTTP_TOKEN", Range: "bearer token, at least 32 bytes", Secret: true},
		{Name: "WINX_USAGE_LOG", Range: "path of the usage log (JSON lines); unset means none"},
		{Name: "WINX_USAGE_LOG_ROTATION", Default: "daily", Range: "daily, hourly or never"},
		{Name: "WINX_USAGE_LOG_KEEP_DAYS", Default: "7", Range: "0 (keep forever) or a number of days", Check: intRange(0, MaxKeepDays)},
		{Name: "XDG_STATE_HOME", Default: "~/.local/state", Range: "absolute path; winx keeps its state in $XDG_STATE_HOME/winx"},
		{Name: "XDG_RUNTIME_DIR", Default: "/run/user/<uid>", Range: "absolute path; sockets go in $XDG_RUNTIME_DIR/winx"},
	}
}

// Settings is doctor's configuration section: every variable with the
// value in effect and where it came from. Secret values never appear,
// free text appears as its length, and a variable's value is shown only
// after its newlines are escaped. A value equal to a secret's, under any
// name, is redacted too.
func Settings(getenv func(string) string) []operator.Setting {
	secrets := map[string]bool{}
	for _, v := range Variables() {
		if val := getenv(v.Name); v.Secret && len(val) >= minSecretValue {
			secrets[val] = true
		}
	}
	vars := Variables()
	out := make([]operator.Setting, 0, len(vars))
	for _, v := range vars {
		s := operator.Setting{Name: v.Name, Value: v.Default, Source: "default"}
		if s.Value == "" {
			s.Value = "(unset)"
		}
		if val := getenv(v.Name); val != "" {
			s.Source = "environment"
			if v.Check != nil {
				if err := v.Check(v.Name, val); err != nil {
					s.Warning = err.Error() + "; the process that reads it refuses to start"
				}
			}
			switch {
			case v.Secret, secrets[val]:
				s.Value = "(set, redacted)"
			case v.Opaque:
				s.Value = fmt.Sprintf("(%d bytes)", len(val))
			default:
				s.Value = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(val)
			}
		}
		out = append(out, s)
	}
	return out
}
