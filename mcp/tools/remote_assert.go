package tools

import (
	"winx/guardian/remote"
	"winx/mcp/session"
)

// A session served by a guardian process is a drop-in shell for the tools:
// the same interfaces, the same sentinel errors as the embedded session.
var (
	_ terminal            = (*remote.RemoteShell)(nil)
	_ session.ShellHealth = (*remote.RemoteShell)(nil)

	_ generationCanceller = (*remote.RemoteShell)(nil)
)
