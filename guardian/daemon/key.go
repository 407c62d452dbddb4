package daemon

import (
	"encoding/json"
	"strings"

	"winx/guardian/remote"
)

// keyLayout versions the layout of a session key.
const keyLayout = "winx1"

// SessionKey identifies the guardian of one logical session. Its string
// form is the guardian's key (remote.Config.Key): stable for one principal
// and canonical workspace (and affinity scope), so a new adapter process
// reaches the guardian an earlier one created, and self-describing, so a
// winxd that restarted can list what each guardian serves from its status
// alone. The key travels as a command-line argument (so it holds no NUL
// byte: it is a JSON array) and never appears in a file name (the socket
// name is a hash).
type SessionKey struct {
	ExternalID string // the session id clients see (ws_<project>_<hash>)
	Principal  string
	Workspace  string // canonical root
	Scope      string // affinity scope; "" for the workspace-wide session
}

// String is the guardian key.
func (k SessionKey) String() string {
	b, err := json.Marshal([]string{keyLayout, k.ExternalID, k.Principal, k.Workspace, k.Scope})
	if err != nil {
		panic("daemon: a string slice always marshals: " + err.Error())
	}
	return string(b)
}

// sandboxScope marks the scope of a session whose shells are confined: a
// confined and an unconfined session never share a guardian.
const sandboxScope = "\x00sandbox"

// noNetworkScope marks a confined session whose shells may not use IP
// networking (WINX_SANDBOX_NETWORK=deny); it ends with sandboxScope, so
// such a key is sandboxed too.
const noNetworkScope = "\x00nonet" + sandboxScope

// Sandboxed returns k as the key of the confined session of the same
// principal, workspace and scope.
func (k SessionKey) Sandboxed() SessionKey {
	if !k.IsSandboxed() {
		k.Scope += sandboxScope
	}
	return k
}

// SandboxedWithoutNetwork returns k as the key of the confined session,
// without IP networking, of the same principal, workspace and scope: it
// never shares a guardian with a confined session that has networking.
func (k SessionKey) SandboxedWithoutNetwork() SessionKey {
	if k.DeniesNetwork() {
		return k
	}
	k.Scope = strings.TrimSuffix(k.Scope, sandboxScope) + noNetworkScope
	return k
}

// DeniesNetwork reports whether k keys a confined session without IP
// networking.
func (k SessionKey) DeniesNetwork() bool { return strings.HasSuffix(k.Scope, noNetworkScope) }

// NetworkEnv is the variable winxd adds to the environment of the
// guardian of key (the last entry wins): the network policy of a confined
// session is its key's, whatever the environment of the request that
// started it says. Nil for a key that is not confined.
func NetworkEnv(key string) []string {
	k, ok := ParseSessionKey(key)
	switch {
	case !ok || !k.IsSandboxed():
		return nil
	}
	return remote.NetworkEnv(k.DeniesNetwork())
}

// IsSandboxed reports whether k keys a confined session. winxd starts the
// guardian of such a key confined whatever a request says, and refuses a
// request whose sandbox flag disagrees with its key.
func (k SessionKey) IsSandboxed() bool { return strings.HasSuffix(k.Scope, sandboxScope) }

// ParseSessionKey reads a guardian key written by String; ok is false for
// a key of another layout (a guardian started by hand with any -key).
func ParseSessionKey(s string) (k SessionKey, ok bool) {
	var parts []string
	if err := json.Unmarshal([]byte(s), &parts); err != nil || len(parts) != 5 || parts[0] != keyLayout {
		return SessionKey{}, false
	}
	return SessionKey{ExternalID: parts[1], Principal: parts[2], Workspace: parts[3], Scope: parts[4]}, true
}
