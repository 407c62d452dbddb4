package wire

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"winx/jsonrpc"
)

// The protocol version this package speaks. A major change breaks old peers
// (they are refused at hello); a minor change only adds methods, fields or
// capabilities that an older peer ignores.
const (
	ProtocolMajor = 1
	ProtocolMinor = 0
)

// MethodHello opens every connection.
const MethodHello = "hello"

// Wire error codes of this package (see the package doc for the range).
const (
	CodeHelloRequired   = -32001
	CodeVersionMismatch = -32002
	CodeUnauthenticated = -32003
	// CodeConfinedPeer: the hello had the secret, but its caller runs
	// inside a confined session (ErrConfinedPeer); data: confinedData.
	CodeConfinedPeer = -32004
)

// Roles of the processes on the wire.
const (
	RoleAdapter  = "adapter"  // winx, the MCP server
	RoleDaemon   = "winxd"    // the control plane
	RoleGuardian = "guardian" // winx-guardian, one per session
)

// maxHelloStrings bounds the capability list a peer may send.
const maxHelloStrings = 256

// Version is a protocol version.
type Version struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
}

// Current is the version this package speaks.
func Current() Version { return Version{Major: ProtocolMajor, Minor: ProtocolMinor} }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Build is a binary's exact identity, as package cmd/internal/buildid reads
// it; the mains fill it in (this package cannot read another binary's).
type Build struct {
	Module    string `json:"module,omitempty"`
	Version   string `json:"version,omitempty"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
}

// Hello is what each side says about itself when a connection opens.
type Hello struct {
	Protocol     Version  `json:"protocol"`
	Role         string   `json:"role"`
	Capabilities []string `json:"capabilities,omitempty"`
	Build        Build    `json:"build"`
	// Epoch names one incarnation of a process: a guardian restarted at
	// the same socket has a new epoch, so a client can tell that the
	// generations it knew belong to a dead process.
	Epoch string `json:"epoch,omitempty"`
	PID   int    `json:"pid"`
	// Secret is the installation's wire secret (see SecretPath), said by
	// a client only: a server never sends it back, and handlers never see
	// it (Peer.Hello has it cleared).
	Secret string `json:"secret,omitempty"`
}

// WithSecret returns h saying secret.
func (h Hello) WithSecret(secret string) Hello {
	h.Secret = secret
	return h
}

// Has reports whether the peer announced capability c.
func (h Hello) Has(c string) bool { return slices.Contains(h.Capabilities, c) }

// NewHello returns this process's hello: current protocol, a fresh epoch and
// its pid.
func NewHello(role string, build Build, capabilities []string) Hello {
	return Hello{Protocol: Current(), Role: role, Capabilities: capabilities, Build: build, Epoch: NewEpoch(), PID: os.Getpid()}
}

// NewEpoch returns a random incarnation id.
func NewEpoch() string {
	var b [12]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// Negotiate returns the version two peers use: the smaller minor of the
// same major, or a *VersionError.
func Negotiate(local, peer Version) (Version, error) {
	if local.Major != peer.Major {
		return Version{}, &VersionError{Local: local, Peer: peer}
	}
	return Version{Major: local.Major, Minor: min(local.Minor, peer.Minor)}, nil
}

// decodeHello parses a peer's hello, bounding what it may carry.
func decodeHello(raw json.RawMessage) (Hello, error) {
	var h Hello
	if err := json.Unmarshal(raw, &h); err != nil {
		return Hello{}, fmt.Errorf("wire: malformed hello: %w", err)
	}
	if len(h.Capabilities) > maxHelloStrings {
		return Hello{}, fmt.Errorf("wire: hello lists %d capabilities, more than %d", len(h.Capabilities), maxHelloStrings)
	}
	if h.Role == "" {
		return Hello{}, fmt.Errorf("wire: hello names no role")
	}
	return h, nil
}

// confinedData is the data of a CodeConfinedPeer error.
type confinedData struct {
	PID    int    `json:"pid,omitempty"`
	Reason string `json:"reason"`
}

// confinedRefusal is the wire error of a hello refused by the admission.
func confinedRefusal(e *ConfinedPeerError) *jsonrpc.Error {
	return jsonrpc.NewErrorWithData(CodeConfinedPeer, e.Error(), confinedData{PID: e.PID, Reason: e.Reason})
}

// versionRefusal is the wire error of a refused hello; its data is the
// server's hello so the client can report both versions.
func versionRefusal(local Hello, err error) *jsonrpc.Error {
	return jsonrpc.NewErrorWithData(CodeVersionMismatch, err.Error(), local)
}
