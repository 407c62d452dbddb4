// Package auth decides who may do what: bearer tokens and their files,
// principals (the hand-parsed TOML file), tool profiles and allowlists, and
// path containment (workspace roots, WINX_ALLOW_PATHS). Session modes and
// the command policy are its sub-package policy; HTTP admission limits are
// admission. It owns no transport: callers hand it credentials and act on
// its typed answers. It never logs or returns a token's bytes in errors.
package auth

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MinTokenBytes is the shortest bearer token accepted.
const MinTokenBytes = 32

// MaxTokenFileBytes bounds a token file read.
const MaxTokenFileBytes = 4096

// Sentinel errors; messages never contain token material.
var (
	ErrTokenTooShort    = errors.New("auth: token shorter than 32 bytes")
	ErrTokenFileMode    = errors.New("auth: token file must not be readable or writable by group or others (chmod 600)")
	ErrTokenFileKind    = errors.New("auth: token file must be a regular file, not a symlink")
	ErrTokenFileTooLong = errors.New("auth: token file is larger than 4096 bytes")
	ErrTokenInvalid     = errors.New("auth: token contains whitespace or control characters")
	ErrTokenEmpty       = errors.New("auth: token is empty")
	// ErrFileOwner: a token file or the principal config is not owned by
	// the user the server runs as, so someone else could have written it.
	ErrFileOwner = errors.New("auth: credential file must be owned by the user the server runs as (chown it)")
	// ErrFileDirWritable: the directory holding a token file or the
	// principal config is writable by group or others, who could replace
	// the file (rename over it) without touching it.
	ErrFileDirWritable = errors.New("auth: the directory of a credential file must not be writable by group or others (chmod go-w)")
)

// TokenFileError names the file that failed a check.
type TokenFileError struct {
	Path string
	Err  error
}

func (e *TokenFileError) Error() string { return e.Err.Error() + ": " + e.Path }
func (e *TokenFileError) Unwrap() error { return e.Err }

// LoadTokenFile reads a bearer token from path. The file must be a regular
// file (a symlink is refused, not followed), without group or other
// permission bits, at most MaxTokenFileBytes long. One trailing newline is
// removed; the token must be at least MinTokenBytes of visible ASCII.
func LoadTokenFile(path string) ([]byte, error) {
	return loadTokenFile(path, false)
}

// LoadWeakTokenFile is LoadTokenFile without the length rule (any visible
// ASCII token of at least one byte), for --allow-weak-token.
func LoadWeakTokenFile(path string) ([]byte, error) {
	return loadTokenFile(path, true)
}

// loadTokenFile is LoadTokenFile; weak relaxes the length rule to
// checkWeakToken's (the principal file's AllowWeakToken).
func loadTokenFile(path string, weak bool) ([]byte, error) {
	data, err := readPrivateFile(path, MaxTokenFileBytes, ErrTokenFileKind, ErrTokenFileMode)
	if err != nil {
		return nil, &TokenFileError{Path: path, Err: err}
	}
	if len(data) > MaxTokenFileBytes {
		return nil, &TokenFileError{Path: path, Err: ErrTokenFileTooLong}
	}
	token := bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("\r"))
	if err := checkTokenRules(token, weak); err != nil {
		return nil, &TokenFileError{Path: path, Err: err}
	}
	return token, nil
}

// readPrivateFile reads at most limit+1 bytes of path (so a caller can tell
// "too long"). It refuses to follow a symlink in the final component (errKind),
// refuses anything but a regular file (errKind) and a file with group or
// other permission bits (errMode). O_NONBLOCK keeps a FIFO from blocking the
// open. Errors are returned bare, for the caller to wrap.
func readPrivateFile(path string, limit int64, errKind, errMode error) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, errKind
		}
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errKind
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, errMode
	}
	if err := checkOwnership(path, info); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// checkOwnership refuses a credential file the server's user does not own,
// or whose directory group or others may write: either lets another user
// choose the token (or the principals) the server trusts.
func checkOwnership(path string, info os.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return ErrFileOwner
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if dir.Mode().Perm()&0o022 != 0 {
		return ErrFileDirWritable
	}
	return nil
}

// CheckToken enforces the token rules: visible ASCII only, and at least
// MinTokenBytes long.
func CheckToken(token []byte) error {
	for _, c := range token {
		if c <= ' ' || c > '~' {
			return ErrTokenInvalid
		}
	}
	if len(token) < MinTokenBytes {
		return ErrTokenTooShort
	}
	return nil
}

// checkTokenRules is CheckToken, or checkWeakToken when weak.
func checkTokenRules(token []byte, weak bool) error {
	if weak {
		return checkWeakToken(token)
	}
	return CheckToken(token)
}

// checkWeakToken is CheckToken without the length floor: at least one byte
// of visible ASCII. Only an explicit AllowWeakToken selects it.
func checkWeakToken(token []byte) error {
	if len(token) == 0 {
		return ErrTokenEmpty
	}
	for _, c := range token {
		if c <= ' ' || c > '~' {
			return ErrTokenInvalid
		}
	}
	return nil
}

// Bearer verifies "Authorization: Bearer <token>" headers in constant time.
type Bearer struct {
	// digest is the SHA-256 of the token: comparing fixed-size digests keeps
	// the comparison's time independent of the presented token's length.
	digest [sha256.Size]byte
}

// NewBearer returns a verifier for token, which must pass CheckToken.
func NewBearer(token []byte) (*Bearer, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
	}
	return &Bearer{digest: sha256.Sum256(token)}, nil
}

// NewWeakBearer is NewBearer without the length rule, for
// --allow-weak-token.
func NewWeakBearer(token []byte) (*Bearer, error) {
	if err := checkWeakToken(token); err != nil {
		return nil, err
	}
	return &Bearer{digest: sha256.Sum256(token)}, nil
}

// VerifyHeader reports whether an Authorization header value carries the
// token. The scheme is case-insensitive, as RFC 6750 and RFC 9110 say.
func (b *Bearer) VerifyHeader(header string) bool {
	scheme, presented, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		// Still spend the comparison so a missing scheme is not faster.
		b.Verify(nil)
		return false
	}
	return b.Verify([]byte(strings.TrimSpace(presented)))
}

// Verify compares a presented token in constant time.
func (b *Bearer) Verify(presented []byte) bool {
	sum := sha256.Sum256(presented)
	return subtle.ConstantTimeCompare(sum[:], b.digest[:]) == 1
}

// CredentialSources returns what the principal file at path points at:
// the token_env variable names and the token_file paths (absolute, a
// relative one taken from the file's directory as LoadPrincipals does), in
// file order. The adapter calls it before the principals are loaded, to
// keep the variables out of every session's environment and the files out
// of every file tool's reach. It reads the file under LoadPrincipals' rules
// and checks nothing else.
func CredentialSources(path string) (envNames, tokenFiles []string, err error) {
	data, err := readPrivateFile(path, MaxTOMLBytes, ErrConfigFileKind, ErrConfigFileMode)
	if err != nil {
		return nil, nil, &PrincipalError{Path: path, Err: err}
	}
	doc, err := parseTOML(data)
	if err != nil {
		te := err.(*TOMLError)
		return nil, nil, &PrincipalError{Path: path, Line: te.Line, Col: te.Col, Err: te}
	}
	for _, t := range doc.tables {
		if v, ok := t.vals[keyTokenEnv]; ok && v.kind == tomlString && v.str != "" {
			envNames = appendUnique(envNames, v.str)
		}
		if v, ok := t.vals[keyTokenFile]; ok && v.kind == tomlString && v.str != "" {
			file := v.str
			if !filepath.IsAbs(file) {
				file = filepath.Join(filepath.Dir(path), file)
			}
			if abs, err := filepath.Abs(file); err == nil {
				tokenFiles = appendUnique(tokenFiles, abs)
			}
		}
	}
	return envNames, tokenFiles, nil
}
