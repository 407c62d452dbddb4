//go:build !linux

package atomicfile

import "golang.org/x/sys/unix"

// searchFlags open a directory that is only walked through (no O_PATH
// here, so it must be readable).
const searchFlags = unix.O_RDONLY
