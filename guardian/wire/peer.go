package wire

import (
	"net"
	"os"
)

// Cred is a socket peer's identity as the kernel saw it at connect time.
type Cred struct {
	PID, UID, GID int
}

// checkPeer accepts only a peer running as this process's uid.
func checkPeer(c *net.UnixConn) (Cred, error) {
	want := os.Getuid()
	cred, err := PeerCred(c)
	if err != nil {
		return Cred{}, &PeerError{UID: -1, WantUID: want, Err: err}
	}
	if cred.UID != want {
		return cred, &PeerError{UID: cred.UID, WantUID: want}
	}
	return cred, nil
}
