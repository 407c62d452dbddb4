package remote

import (
	"fmt"
	"io"
	"os"

	"winx/edit/atomicfile"
)

// The records a guardian keeps beside its socket (record.go, jobsrecord.go)
// are small JSON files, replaced whole and read back within a bound.

// replaceFile writes b to path atomically, with the one atomic write
// (edit/atomicfile): a private (0600) temporary file in the same directory,
// renamed over path. No fsync: a record must outlive its guardian's
// process, not the machine (the runtime directory is usually a tmpfs); a
// rename is atomic for every other process.
func replaceFile(path string, b []byte) error {
	return atomicfile.WriteFile(path, b, 0o600, atomicfile.Durability{})
}

// overLimitError is a file that readBounded found over its limit.
type overLimitError struct {
	path  string
	limit int
}

func (e *overLimitError) Error() string { return fmt.Sprintf("%s is over %d bytes", e.path, e.limit) }

// readBounded reads the file at path if it holds at most limit bytes; a
// larger one is an *overLimitError, a missing one an error wrapping
// fs.ErrNotExist.
func readBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, &overLimitError{path: path, limit: limit}
	}
	return b, nil
}
