package main

// Credentials that reach `winx serve --http` through its environment
// (WINX_HTTP_TOKEN, the principals' token_env variables, a copy of a token
// under another name) would stay in /proc/PID/environ for the life of the
// process: the kernel shows the environment block the process was started
// with, whatever os.Unsetenv does to the runtime's copy, and root
// (CAP_SYS_PTRACE) reads it even of an undumpable process. So serve reads
// them once and re-executes itself (the same pid, executable and arguments)
// with an environment without them, handing their values to the new image
// on an inherited descriptor that the marker credentialFDVar names.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"winx/cmd/internal/config"
	"winx/cmd/internal/entry"
)

// credentialFDVar is the marker of a re-executed serve: the number of the
// descriptor holding its credentials, and nothing else.
const credentialFDVar = "WINX_CREDENTIAL_FD"

// maxCredentialBytes bounds the handed-over credentials (their encoding),
// on both sides: tokens are short, and a larger handoff is refused rather
// than read without end.
const maxCredentialBytes = 1 << 20

// credentialMagic opens an encoded handoff, and credentialEnd closes it:
// a handoff cut short (or read in part by someone else) is refused.
const (
	credentialMagic = "winx-credentials-1"
	credentialEnd   = "end"
)

// Record kinds of the encoding.
const (
	recordEnv   = "env"   // NAME=VALUE of a credential variable
	recordToken = "token" // the value of --token
)

// ErrCredentialHandoff: the descriptor credentialFDVar names is not a
// well-formed handoff of this process. Start-up stops on it.
var ErrCredentialHandoff = errors.New("winx: credential handoff")

// credentials are what a re-executed serve gets from its first image.
type credentials struct {
	env   []string // NAME=VALUE of each credential variable that was set
	token string   // --token's value; "" when --token was not given
}

// marshal encodes c as NUL-terminated fields: the magic, then kind and
// value pairs, then the end mark. Neither an environment entry nor an
// argument can hold a NUL, so no escaping is needed.
func (c credentials) marshal() []byte {
	var b bytes.Buffer
	field := func(s string) { b.WriteString(s); b.WriteByte(0) }
	field(credentialMagic)
	for _, kv := range c.env {
		field(recordEnv)
		field(kv)
	}
	if c.token != "" {
		field(recordToken)
		field(c.token)
	}
	field(credentialEnd)
	return b.Bytes()
}

// parseCredentials is marshal's inverse; anything else is an error.
func parseCredentials(data []byte) (credentials, error) {
	var c credentials
	if len(data) > maxCredentialBytes {
		return c, fmt.Errorf("%w: larger than %d bytes", ErrCredentialHandoff, maxCredentialBytes)
	}
	if len(data) == 0 || data[len(data)-1] != 0 {
		return c, fmt.Errorf("%w: cut short", ErrCredentialHandoff)
	}
	fields := strings.Split(string(data[:len(data)-1]), "\x00")
	if len(fields) < 2 || fields[0] != credentialMagic || fields[len(fields)-1] != credentialEnd || len(fields)%2 != 0 {
		return c, fmt.Errorf("%w: malformed", ErrCredentialHandoff)
	}
	for i := 1; i < len(fields)-1; i += 2 {
		switch kind, v := fields[i], fields[i+1]; {
		case kind == recordEnv && strings.IndexByte(v, '=') > 0:
			c.env = append(c.env, v)
		case kind == recordToken && v != "" && c.token == "":
			c.token = v
		default:
			return c, fmt.Errorf("%w: malformed record %q", ErrCredentialHandoff, kind)
		}
	}
	return c, nil
}

// inheritedEnviron is the environment winx reads its configuration from:
// its own, and, in a re-executed serve, the credentials handed over on the
// descriptor credentialFDVar names, which it reads and closes here, first
// of all. handed is nil in a process that was not re-executed.
func inheritedEnviron() (environ []string, handed *credentials, err error) {
	fd, marked := os.LookupEnv(credentialFDVar)
	if !marked {
		return os.Environ(), nil, nil
	}
	// Neither the configuration nor any child (winxd, shells, git) sees
	// the marker.
	os.Unsetenv(credentialFDVar)
	c, err := receiveCredentials(fd)
	if err != nil {
		return nil, nil, err
	}
	return append(os.Environ(), c.env...), &c, nil
}

// shedCredentials keeps tokens out of this process's environment block. In
// a first image whose environment holds a credential of serve --http, it
// re-executes the process without them and does not return unless that
// fails. In a re-executed image (handed != nil) it takes over --token's
// value, blanked on the command line it was started with, and checks that
// the environment block holds no credential. Any failure stops start-up:
// serving on with a token in /proc/PID/environ is what this prevents.
func shedCredentials(cfg *config.Adapter, handed *credentials) error {
	s := &cfg.Serve
	if handed != nil {
		if handed.token != "" {
			// The first image blanked --token's value with as many '*'.
			if len(s.Token) != len(handed.token) || strings.Trim(s.Token, "*") != "" {
				return fmt.Errorf("%w: --token does not match the handed-over token", ErrCredentialHandoff)
			}
			s.Token = handed.token
		}
		if leaks(os.Environ(), s.ShellEnv) {
			return fmt.Errorf("%w: the environment still holds a credential after re-executing", ErrCredentialHandoff)
		}
		return nil
	}
	if cfg.Command != config.CommandServe || !s.HTTP || s.Version || !reexecSupported {
		return nil
	}
	environ := os.Environ()
	if !leaks(environ, s.ShellEnv) {
		return nil
	}
	var c credentials
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); slices.Contains(s.CredentialEnv, name) {
			c.env = append(c.env, kv)
		}
	}
	if s.Token != "" {
		// The new image's command line is this one, blanked: the token
		// travels with the variables instead.
		c.token = strings.Clone(s.Token)
		entry.ScrubArgs(c.token)
	}
	return reexecWith(s.ShellEnv, c)
}

// leaks reports whether environ holds an entry clean (its credential-free
// subset, Serve.ShellEnv) dropped.
func leaks(environ, clean []string) bool {
	kept := make(map[string]bool, len(clean))
	for _, kv := range clean {
		kept[kv] = true
	}
	for _, kv := range environ {
		if !kept[kv] {
			return true
		}
	}
	return false
}
