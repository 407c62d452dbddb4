package wire

import (
	"net"
	"syscall"
)

// PeerCred returns the credentials the kernel recorded for the other end of
// c when it connected (SO_PEERCRED); they cannot be forged by the peer.
func PeerCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{}, err
	}
	var (
		uc   *syscall.Ucred
		gerr error
	)
	if err := raw.Control(func(fd uintptr) {
		uc, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return Cred{}, err
	}
	if gerr != nil {
		return Cred{}, gerr
	}
	return Cred{PID: int(uc.Pid), UID: int(uc.Uid), GID: int(uc.Gid)}, nil
}
