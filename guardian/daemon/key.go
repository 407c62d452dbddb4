package daemon

import (
	"encoding/json"
	"strings"
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

// Sandboxed returns k as the key of the confined session of the same
// principal, workspace and scope.
func (k SessionKey) Sandboxed() SessionKey {
	if !k.IsSandboxed() {
		k.Scope += sandboxScope
	}
	return k
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
