package wire

import (
	"errors"
	"fmt"
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

// soPeerPidfd is SO_PEERPIDFD (Linux 6.5), the same number on every
// architecture Go supports; package syscall predates it.
const soPeerPidfd = 77

// peerPidfd returns a pidfd (close-on-exec) of the process that connected
// c, or -1 when the kernel predates SO_PEERPIDFD. A peer that has already
// exited is an error: the kernel gives no pidfd for it.
func peerPidfd(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var (
		pidfd int
		gerr  error
	)
	if err := raw.Control(func(fd uintptr) {
		pidfd, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, soPeerPidfd)
	}); err != nil {
		return -1, err
	}
	if errors.Is(gerr, syscall.ENOPROTOOPT) {
		return -1, nil
	}
	if gerr != nil {
		return -1, fmt.Errorf("%w: SO_PEERPIDFD: %w", errPeerGone, gerr)
	}
	return pidfd, nil
}

// inspectPeer reads what proc says of the peer of c (cred, from
// SO_PEERCRED): its confinement and its ancestry. Where the kernel has
// SO_PEERPIDFD the reads are pinned to the process that connected: the
// pidfd is taken first, /proc is read, and then the pidfd must still name
// a live process with that pid. A process holds its pid until it is
// reaped, so what was read under that pid was its own; a peer that is
// gone is refused (errPeerGone). Before Linux 6.5 the reads are not
// pinned: a peer that exits at once and whose pid the kernel hands to
// another process before the reads would be judged as that process, which
// needs the whole pid space to wrap around within that moment.
func inspectPeer(c *net.UnixConn, cred Cred, proc Proc) (*PeerProcess, error) {
	if cred.PID <= 0 {
		return nil, fmt.Errorf("%w: its pid is not visible in this pid namespace", errPeerUnknown)
	}
	pidfd, err := peerPidfd(c)
	if err != nil {
		return nil, err
	}
	if pidfd >= 0 {
		defer syscall.Close(pidfd)
	}
	conf, err := proc.Confinement(cred.PID)
	if errors.Is(err, ErrProcGone) {
		return nil, fmt.Errorf("%w: %w", errPeerGone, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPeerUnknown, err)
	}
	anc, complete, err := proc.Ancestry(cred.PID)
	if errors.Is(err, ErrProcGone) {
		return nil, fmt.Errorf("%w: %w", errPeerGone, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errPeerUnknown, err)
	}
	p := &PeerProcess{PID: cred.PID, Confinement: conf, Ancestors: anc, Complete: complete}
	if pidfd >= 0 {
		if got, ok := proc.FDPid(pidfd); !ok || got != cred.PID {
			return nil, fmt.Errorf("%w: pid %d exited while it was inspected", errPeerGone, cred.PID)
		}
		p.Pinned = true
	}
	return p, nil
}
