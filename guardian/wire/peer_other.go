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
