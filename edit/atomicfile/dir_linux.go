package atomicfile

import "golang.org/x/sys/unix"

// searchFlags open a directory that is only walked through: O_PATH needs
// search permission alone, as path resolution does.
const searchFlags = unix.O_PATH
