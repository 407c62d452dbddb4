package pty

import "golang.org/x/sys/unix"

// getTermios is the request that reads a terminal's modes here.
const getTermios = unix.TIOCGETA
