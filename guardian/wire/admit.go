package wire

import (
	"errors"
	"slices"
)

// Why a peer could not be judged; both refuse it.
var (
	// errPeerGone: the process that connected exited before it was
	// judged.
	errPeerGone = errors.New("the caller is gone")
	// errPeerUnknown: the peer's process could not be read.
	errPeerUnknown = errors.New("the caller's process cannot be inspected")
)

// PeerProcess is what /proc says of the process at the other end of a
// connection, read once when it says hello (see ServeOptions.Admit). A
// connection's peer never changes (SO_PEERCRED names the process that
// connected), so one reading serves the connection's life.
type PeerProcess struct {
	PID         int
	Confinement Confinement
	// Ancestors are the peer's parent, grandparent and so on, nearest
	// first; Complete says the walk reached a process without a parent
	// (see Proc.Ancestry).
	Ancestors []int
	Complete  bool
	// Pinned: the kernel gave the peer's pidfd (SO_PEERPIDFD, Linux 6.5),
	// and the process was still alive, under its pid, after the reads.
	Pinned bool
}

// DescendsFrom reports whether pid is one of p's ancestors (p itself is
// not its own descendant).
func (p *PeerProcess) DescendsFrom(pid int) bool { return slices.Contains(p.Ancestors, pid) }

// AdmitFunc decides whether the peer of a connection that said hello with
// the right secret may be served. It returns nil to admit, or the reason
// to refuse, best a *ConfinedPeerError (any other error is wrapped in
// one). It runs once per connection.
type AdmitFunc func(*PeerProcess) error

// refusal types the error of an admission: every refusal is a
// *ConfinedPeerError carrying the peer's pid.
func refusal(pid int, err error) *ConfinedPeerError {
	var ce *ConfinedPeerError
	if errors.As(err, &ce) {
		if ce.PID == 0 {
			c := *ce
			c.PID = pid
			return &c
		}
		return ce
	}
	return &ConfinedPeerError{PID: pid, Reason: err.Error()}
}
