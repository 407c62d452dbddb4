//go:build !linux

package wire

import (
	"errors"
	"net"
)

// PeerCred is not implemented off Linux; every peer is then rejected, which
// fails closed.
func PeerCred(c *net.UnixConn) (Cred, error) {
	return Cred{}, errors.New("wire: peer credentials are not supported on this system")
}

// inspectPeer is not implemented off Linux: a server with an admission
// check refuses every peer there (and PeerCred has refused them before).
func inspectPeer(*net.UnixConn, Cred, Proc) (*PeerProcess, error) {
	return nil, errors.Join(errPeerUnknown, errors.New("wire: peer processes cannot be inspected on this system"))
}
