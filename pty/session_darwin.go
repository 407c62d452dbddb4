package pty

// killSession is a no-op on darwin, which has no /proc; Close still kills
// the shell's own process group.
func killSession(sid int) {}
