// Package config is the one place where winx, winxd and winx-guardian read
// their command lines and environment variables: each main loads its typed
// configuration (Adapter, Daemon, Guardian) once at start-up, with one
// boolean parser (ParseBool) and one integer parser (ParseInt), and passes
// values on. It starts nothing and opens nothing.
//
// Lower packages that read variables of their own (socket paths in
// guardian/wire, sandbox paths in pty/sandbox, state paths in
// guardian/daemon) get the same lookup function the configuration was read
// with, never os.Getenv behind the main's back.
//
// It imports no tool catalog: what the adapter's flags need from it comes in
// a Catalog value, so that winxd and winx-guardian link nothing of it.
package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrUsage marks a command line or an environment that was rejected and
// already explained on stderr; the mains exit with status 2 for it.
var ErrUsage = errors.New("config: usage")

// ErrNotBool and ErrNotInt are the causes of a VarError.
var (
	ErrNotBool = errors.New("not a boolean (want 1, true, yes, on, 0, false, no or off)")
	ErrNotInt  = errors.New("not an integer")
)

// VarError is an environment variable whose value cannot be used.
type VarError struct {
	Name  string // the variable, e.g. "WINX_SANDBOX"
	Value string
	Err   error // ErrNotBool, ErrNotInt, or the reason the value is refused
}

func (e *VarError) Error() string { return fmt.Sprintf("%s=%q: %v", e.Name, e.Value, e.Err) }
func (e *VarError) Unwrap() error { return e.Err }

// ParseBool parses the boolean variable name: 1, true, yes, on and 0, false,
// no, off, in any case. The empty value is the default, false. Anything else
// is a *VarError naming the variable.
func ParseBool(name, value string) (bool, error) {
	switch strings.ToLower(value) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, &VarError{Name: name, Value: value, Err: ErrNotBool}
}

// ParseInt parses the integer variable name; set is false for the empty
// value. A value that is not a decimal integer, or is below min, is a
// *VarError naming the variable.
func ParseInt(name, value string, min int) (n int, set bool, err error) {
	if value == "" {
		return 0, false, nil
	}
	n, err = strconv.Atoi(value)
	if err != nil {
		return 0, false, &VarError{Name: name, Value: value, Err: ErrNotInt}
	}
	if n < min {
		return 0, false, &VarError{Name: name, Value: value, Err: fmt.Errorf("below %d", min)}
	}
	return n, true, nil
}

// budget reads a non-negative integer setting where anything else (unset,
// malformed, negative) means the default, 0: the lenient rule the ReadFiles
// budgets have always had.
func budget(getenv func(string) string, name string) int {
	n, _, err := ParseInt(name, getenv(name), 0)
	if err != nil {
		return 0
	}
	return n
}

// env reads one environment, collecting the errors of its boolean
// variables so that all of them are reported at once.
type env struct {
	getenv func(string) string
	errs   []error
}

func (e *env) bool(name string) bool {
	v, err := ParseBool(name, e.getenv(name))
	if err != nil {
		e.errs = append(e.errs, err)
	}
	return v
}

// Lookup is getenv over an environment list such as os.Environ(): the last
// entry of a name wins.
func Lookup(environ []string) func(string) string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(name string) string { return m[name] }
}

// secretEnv names variables that hold winx's own credentials; shells the
// model drives must not inherit them.
var secretEnv = []string{"WINX_HTTP_TOKEN"}

// minSecretValue is the shortest credential value shellEnv matches by value.
const minSecretValue = 8

// shellEnv is the environment of session shells (and of the winxd an
// adapter starts): the adapter's own minus every credential source. A
// variable goes when its name is a credential's (WINX_HTTP_TOKEN and the
// extra names, the principals' token_env variables), and also when its
// value is a credential's value or the secret given as secrets, whatever
// its name: a token exported twice, under a second name, must not reach
// a shell either. Values shorter than minSecretValue are matched by name
// only: a weak test token such as "1" must not take SHLVL=1 with it.
func shellEnv(environ, extraNames, secrets []string) []string {
	names := append(slices.Clone(secretEnv), extraNames...)
	getenv := Lookup(environ)
	values := make(map[string]bool)
	for _, name := range names {
		if v := getenv(name); len(v) >= minSecretValue {
			values[v] = true
		}
	}
	for _, v := range secrets {
		if len(v) >= minSecretValue {
			values[v] = true
		}
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if slices.Contains(names, name) || values[value] {
			continue
		}
		out = append(out, kv)
	}
	return out
}
