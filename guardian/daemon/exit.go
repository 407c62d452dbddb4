package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"winx/edit/atomicfile"
	"winx/guardian/wire"
)

// Files of winxd in the state directory.
const (
	// ExitFileName records how winxd last stopped (see ExitRecord).
	ExitFileName = "winxd-exit.json"
	// LogFileName is winxd's log when it is started without -log-file.
	LogFileName = "winxd.log"
	// maxExitFile bounds reading the exit record.
	maxExitFile = 16 << 10
)

// States of an ExitRecord.
const (
	StateRunning = "running" // written at start; still there after a SIGKILL or crash
	StateExited  = "exited"
)

// ExitRecord is winxd's last start or exit, kept for `winx doctor`. winxd
// writes it as running when it starts and as exited with the reason when it
// stops; a record still running whose process is gone means winxd was
// killed without a chance to say why.
type ExitRecord struct {
	State  string     `json:"state"`
	Reason string     `json:"reason,omitempty"`
	PID    int        `json:"pid"`
	Time   time.Time  `json:"time"`
	Build  wire.Build `json:"build"`
}

// StateDir is where winx keeps state: $XDG_STATE_HOME/winx when that is an
// absolute path, else ~/.local/state/winx; "" when neither is known.
func StateDir(getenv func(string) string) string { return wire.StateDir(getenv) }

// WriteExitRecord replaces the record in dir (a private 0700 directory,
// created if missing) with a 0600 file, atomically. It is not fsynced: the
// record only helps `winx doctor` explain a stop, and a power loss explains
// itself.
func WriteExitRecord(dir string, r ExitRecord) error {
	if dir == "" {
		return errors.New("daemon: no state directory")
	}
	if err := atomicfile.MkdirPrivate(dir); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ExitFileName), append(b, '\n'), 0o600, atomicfile.Durability{})
}

// ReadExitRecord reads the record in dir; a missing file wraps
// fs.ErrNotExist.
func ReadExitRecord(dir string) (ExitRecord, error) {
	f, err := os.Open(filepath.Join(dir, ExitFileName))
	if err != nil {
		return ExitRecord{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxExitFile+1))
	if err != nil {
		return ExitRecord{}, err
	}
	if len(b) > maxExitFile {
		return ExitRecord{}, fmt.Errorf("daemon: %s is larger than %d bytes", ExitFileName, maxExitFile)
	}
	var r ExitRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return ExitRecord{}, fmt.Errorf("daemon: %s: %w", ExitFileName, err)
	}
	return r, nil
}

// OpenLog opens path for appending, creating it 0600 (and its directory
// 0700).
func OpenLog(path string) (*os.File, error) {
	// Not atomicfile.MkdirPrivate: the operator chooses the path
	// (-log-file), and an existing directory such as /var/log or a home
	// directory must keep its mode; only a missing one is made private.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(0o600)
	}
	return f, nil
}
