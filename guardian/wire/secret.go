package wire

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"winx/edit/atomicfile"
)

// The wire secret authenticates every hello: the uid check of the socket
// cannot tell the adapter from a program in a confined session, which runs
// as the same uid. The secret is 32 random bytes, hex-encoded, one per
// installation (state directory), in a 0600 file in a 0700 directory. A
// Landlock-confined shell cannot read it: the state directory lies in the
// home directory the sandbox hides, and the sandbox refuses to start a shell
// whose policy would expose the file (see SecretPath's callers). It never
// travels in an environment or on a command line: /proc/PID/environ of an
// unconfined guardian was found readable from inside the sandbox, and the
// initial environment block keeps a variable even after unsetenv. A spawned
// guardian reads it from an inherited pipe (remote.Config.SecretFD).
const (
	// SecretSize is the number of random bytes of a secret.
	SecretSize = 32
	// SecretFileName is the secret's file in the state directory.
	SecretFileName = "wire-secret"
)

// ErrNoSecret: no wire secret could be had (no state directory, or a file
// that is not a secret), or a server was asked to serve without one.
var ErrNoSecret = errors.New("wire: no wire secret")

// SecretError is a secret file that failed its checks.
type SecretError struct {
	Path   string
	Reason string
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("wire: secret %s: %s", e.Path, e.Reason)
}
func (e *SecretError) Unwrap() error { return ErrNoSecret }

// StateDir is winx's state directory: $XDG_STATE_HOME/winx, else
// ~/.local/state/winx; "" when neither variable is an absolute path.
func StateDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "winx")
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state", "winx")
}

// SessionsDirName is the directory of the state directory in which every
// session keeps its private directory (package guardian, Options.PrivateRoot).
const SessionsDirName = "sessions"

// SessionsDir is where sessions keep their private directories: inside the
// state directory, which confined shells cannot read (the sandbox hides it
// with the home directory; the read-only profile hides it explicitly). ""
// when there is no state directory.
func SessionsDir(getenv func(string) string) string {
	if d := StateDir(getenv); d != "" {
		return filepath.Join(d, SessionsDirName)
	}
	return ""
}

// SecretPath is the secret's file of the installation that getenv
// describes, or an error wrapping ErrNoSecret.
func SecretPath(getenv func(string) string) (string, error) {
	dir := StateDir(getenv)
	if dir == "" {
		return "", fmt.Errorf("%w: neither XDG_STATE_HOME nor HOME is an absolute path", ErrNoSecret)
	}
	return filepath.Join(dir, SecretFileName), nil
}

// ValidSecret reports whether s has the form of a secret.
func ValidSecret(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == SecretSize
}

// SameSecret compares two secrets in constant time; an empty one never
// matches.
func SameSecret(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// NewSecret returns a fresh random secret.
func NewSecret() string {
	var b [SecretSize]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// LoadSecret reads the secret at path: a regular 0600 (or stricter) file
// owned by this uid, not a symbolic link, in a directory owned by this uid
// that group and others cannot enter. Any other file is a *SecretError.
func LoadSecret(path string) (string, error) {
	if err := checkSecretDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %w", ErrNoSecret, err)
		}
		if errors.Is(err, syscall.ELOOP) {
			return "", &SecretError{Path: path, Reason: "is a symbolic link"}
		}
		return "", &SecretError{Path: path, Reason: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", &SecretError{Path: path, Reason: err.Error()}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return "", &SecretError{Path: path, Reason: "not a regular file"}
	case !ok || int(st.Uid) != os.Getuid():
		return "", &SecretError{Path: path, Reason: "not owned by this user"}
	case fi.Mode().Perm()&0o077 != 0:
		return "", &SecretError{Path: path, Reason: fmt.Sprintf("mode %04o is readable by group or others", fi.Mode().Perm())}
	}
	b, err := io.ReadAll(io.LimitReader(f, 2*SecretSize+1))
	if err != nil {
		return "", &SecretError{Path: path, Reason: err.Error()}
	}
	if !ValidSecret(string(b)) {
		return "", &SecretError{Path: path, Reason: "does not hold a secret"}
	}
	return string(b), nil
}

// EnsureSecret returns the secret at path, creating it (and its directory,
// 0700) when missing. Creation is atomic: concurrent callers all end up
// with the one file that won.
func EnsureSecret(path string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("%w: create %s: %v", ErrNoSecret, dir, err)
	}
	s, err := LoadSecret(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	// The one atomic write (edit/atomicfile): a private temp file, synced,
	// then linked into place.
	tmp, err := atomicfile.CreateTemp(dir, []byte(NewSecret()), atomicfile.TempOptions{Perm: 0o600, Sync: true})
	if err != nil {
		return "", fmt.Errorf("%w: write a temporary file in %s: %v", ErrNoSecret, dir, err)
	}
	defer tmp.Discard()
	// A hard link never replaces: if another process created the file
	// first, its secret is the one everybody uses.
	if err := tmp.Link(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%w: %v", ErrNoSecret, err)
	}
	return LoadSecret(path)
}

// checkSecretDir refuses a directory another user could read or tamper
// with; one owned by this uid that is merely too open is made 0700.
func checkSecretDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrNoSecret, err)
		}
		return &SecretError{Path: dir, Reason: err.Error()}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return &SecretError{Path: dir, Reason: "is not a directory"}
	case !ok || int(st.Uid) != os.Getuid():
		return &SecretError{Path: dir, Reason: "is not owned by this user"}
	case fi.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(dir, 0o700); err != nil {
			return &SecretError{Path: dir, Reason: err.Error()}
		}
	}
	return nil
}
