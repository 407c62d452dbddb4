package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors of the wire.
var (
	// ErrVersionMismatch: the peer speaks another protocol major.
	ErrVersionMismatch = errors.New("wire: protocol version mismatch")
	// ErrHelloRequired: a call came before a successful hello.
	ErrHelloRequired = errors.New("wire: hello required")
	// ErrPeerRejected: the peer runs as another uid, or its credentials
	// could not be read.
	ErrPeerRejected = errors.New("wire: peer rejected")
	// ErrUnsafeDir: the socket directory is not private to this uid.
	ErrUnsafeDir = errors.New("wire: socket directory is not private")
	// ErrInUse: a live server already answers on the socket path.
	ErrInUse = errors.New("wire: socket is in use")
	// ErrNotSocket: the socket path exists and is not a socket; it is
	// never removed.
	ErrNotSocket = errors.New("wire: path exists and is not a socket")
	// ErrPathTooLong: the socket path does not fit a sockaddr_un.
	ErrPathTooLong = errors.New("wire: socket path too long")
	// ErrNoServer: nothing listens on the socket (no file, or a stale one).
	ErrNoServer = errors.New("wire: no server on socket")
	// ErrUnauthenticated: the server refused the hello for its secret
	// (missing or wrong); the connection is closed.
	ErrUnauthenticated = errors.New("wire: hello refused: wrong or missing wire secret")
	// ErrConnectionLost: the server closed the connection before answering.
	ErrConnectionLost = errors.New("wire: connection lost")
	// ErrConfinedPeer: the server refused a caller that had the secret
	// because the caller runs inside a confined session (or is confined
	// beyond the server); the connection is closed. See
	// ConfinedPeerError.
	ErrConfinedPeer = errors.New("wire: refused: the caller runs inside a confined session")
)

// VersionError is a hello refused for its protocol major.
type VersionError struct {
	Local, Peer Version
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("wire: protocol version mismatch: we speak %s, peer speaks %s", e.Local, e.Peer)
}
func (e *VersionError) Unwrap() error { return ErrVersionMismatch }

// PeerError is a connection refused for its peer's credentials.
type PeerError struct {
	UID, WantUID int // UID is -1 when the credentials could not be read
	Err          error
}

func (e *PeerError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("wire: peer rejected: credentials unreadable: %v", e.Err)
	}
	return fmt.Sprintf("wire: peer rejected: uid %d, want %d", e.UID, e.WantUID)
}
func (e *PeerError) Unwrap() error { return ErrPeerRejected }

// DirError is a socket directory that failed the privacy check.
type DirError struct {
	Dir    string
	Reason string
}

func (e *DirError) Error() string {
	return fmt.Sprintf("wire: socket directory %s: %s", e.Dir, e.Reason)
}
func (e *DirError) Unwrap() error { return ErrUnsafeDir }

// DialError is a socket that could not be reached. Err wraps ErrNoServer
// when nothing listens there.
type DialError struct {
	Path string
	Err  error
}

func (e *DialError) Error() string { return fmt.Sprintf("wire: dial %s: %v", e.Path, e.Err) }
func (e *DialError) Unwrap() error { return e.Err }

// ConfinedPeerError is a hello refused for where its caller runs: inside a
// confined session, confined beyond the server, or a process that could
// not be judged (gone, unreadable). Reason names the rule; it holds no
// secret and is what the server logs and the caller is told.
type ConfinedPeerError struct {
	PID    int // the caller's pid as the server saw it; 0 when unknown
	Reason string
}

func (e *ConfinedPeerError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%v (pid %d: %s)", ErrConfinedPeer, e.PID, e.Reason)
	}
	return fmt.Sprintf("%v (%s)", ErrConfinedPeer, e.Reason)
}
func (e *ConfinedPeerError) Unwrap() error { return ErrConfinedPeer }
