package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Socket names inside the runtime directory.
const (
	// DaemonSocketName is winxd's socket when WINX_SOCKET does not name one.
	DaemonSocketName = "winxd.sock"
	// guardianPrefix and guardianSuffix frame the hashed session key.
	guardianPrefix = "g-"
	guardianSuffix = ".sock"
	// keyHashHex is how many hex digits of the key's SHA-256 name a
	// guardian socket: 128 bits, short enough for sockaddr_un.
	keyHashHex = 32
	// maxSocketPath is the longest path a sockaddr_un holds with its NUL
	// (108 on Linux, 104 on the BSDs; the smaller is used everywhere).
	maxSocketPath = 103
)

// Paths are where the runtime sockets live.
type Paths struct {
	Dir    string // directory of every socket; private (0700, owned by the uid)
	Daemon string // winxd's socket
}

// Resolve decides the runtime paths from the environment (getenv is
// os.Getenv outside tests), in this order:
//
//  1. WINX_SOCKET, an absolute path: winxd's socket; the other sockets go in
//     its directory.
//  2. $XDG_RUNTIME_DIR/winx when XDG_RUNTIME_DIR is an absolute path.
//  3. /run/user/<uid>/winx when /run/user/<uid> is a directory.
//  4. $TMPDIR/winx-<uid> (TMPDIR defaulting to /tmp).
//
// Resolve creates nothing; EnsureDir creates and checks the directory.
func Resolve(getenv func(string) string) (Paths, error) {
	if s := getenv("WINX_SOCKET"); s != "" {
		if !filepath.IsAbs(s) {
			return Paths{}, fmt.Errorf("wire: WINX_SOCKET must be an absolute path, got %q", s)
		}
		s = filepath.Clean(s)
		return Paths{Dir: filepath.Dir(s), Daemon: s}, nil
	}
	uid := strconv.Itoa(os.Getuid())
	var dir string
	if x := getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		dir = filepath.Join(x, "winx")
	} else if fi, err := os.Stat(filepath.Join("/run/user", uid)); err == nil && fi.IsDir() {
		dir = filepath.Join("/run/user", uid, "winx")
	} else {
		tmp := getenv("TMPDIR")
		if tmp == "" || !filepath.IsAbs(tmp) {
			tmp = "/tmp"
		}
		dir = filepath.Join(tmp, "winx-"+uid)
	}
	return Paths{Dir: dir, Daemon: filepath.Join(dir, DaemonSocketName)}, nil
}

// GuardianSocket is the socket of the guardian serving key in dir: the key
// is hashed so it may hold any bytes and never leaks through a file name.
func GuardianSocket(dir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, guardianPrefix+hex.EncodeToString(sum[:])[:keyHashHex]+guardianSuffix)
}

// EnsureDir creates dir (0700, its parent must exist) if it is missing and
// then checks it with CheckDir.
func EnsureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("wire: create socket directory: %w", err)
	}
	return CheckDir(dir)
}

// CheckDir refuses a socket directory that another user could tamper with:
// it must be a real directory (not a symlink), owned by this process's uid,
// and not writable by group or others. A directory made reachable (0711,
// 0755) on purpose is accepted; the sockets in it stay 0600 and every peer
// is checked by uid anyway.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return &DirError{Dir: dir, Reason: err.Error()}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &DirError{Dir: dir, Reason: "is a symbolic link"}
	}
	if !fi.IsDir() {
		return &DirError{Dir: dir, Reason: "is not a directory"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &DirError{Dir: dir, Reason: "owner unknown"}
	}
	if int(st.Uid) != os.Getuid() {
		return &DirError{Dir: dir, Reason: fmt.Sprintf("owned by uid %d, not %d", st.Uid, os.Getuid())}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &DirError{Dir: dir, Reason: fmt.Sprintf("mode %04o is writable by group or others", fi.Mode().Perm())}
	}
	return nil
}
