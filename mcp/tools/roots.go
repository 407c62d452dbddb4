package tools

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"sync"

	"winx/mcp"
	"winx/mcp/session"
)

// rootsInputKey names the roots/list input request inside an Initialize call.
const rootsInputKey = "roots"

// rootsBootstrap lets a local (stdio) client that advertises Roots choose the
// workspace of an Initialize call that names none: the first file:// root
// the client lists. The answer is asked once and then kept for the life of
// the connection, so a later roots change never moves a session that is
// already bound; the user changes workspaces with
// user_asked_change_workspace, as everywhere else.
type rootsBootstrap struct {
	mu   sync.Mutex
	done bool   // the client answered roots/list (even with no usable root)
	root string // its first file:// root as a local path, "" when none
}

// rootsList is the part of a roots/list result Winx reads.
type rootsList struct {
	Roots []struct {
		URI  string `json:"uri"`
		Name string `json:"name,omitempty"`
	} `json:"roots"`
}

// workspace returns the bootstrap root for this call, asking the client on
// first use. ok is false when the client does not support Roots or listed no
// usable root; the caller then falls back to a scratch playground. An error
// for which mcp.IsInputRequired holds must be returned unchanged.
func (b *rootsBootstrap) workspace(ctx context.Context, req *mcp.ToolRequest) (root string, ok bool, err error) {
	if !req.ClientCapabilities().Has("roots") {
		return "", false, nil
	}
	b.mu.Lock()
	if b.done {
		root := b.root
		b.mu.Unlock()
		return root, root != "", nil
	}
	b.mu.Unlock()

	// Not under the lock: a legacy client answers over the same transport,
	// and a 2026-07-28 client answers in a later round of this request.
	answers, err := req.Input(ctx, map[string]mcp.InputRequest{rootsInputKey: {Method: "roots/list"}})
	if err != nil {
		return "", false, err
	}
	root = firstFileRoot(answers[rootsInputKey])

	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done { // the first answer wins; a racing second call keeps it
		b.done, b.root = true, root
	}
	return b.root, b.root != "", nil
}

// firstFileRoot returns the local path of the first file:// root in a
// roots/list result, or "" when none is usable.
func firstFileRoot(raw json.RawMessage) string {
	var list rootsList
	if err := json.Unmarshal(raw, &list); err != nil {
		return ""
	}
	for _, r := range list.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
			continue
		}
		if p := filepath.Clean(u.Path); filepath.IsAbs(p) {
			return p
		}
	}
	return ""
}

// bootstrapFromRoots fills in the workspace of a stdio first_call that names
// none (and does not come back with a known thread) from the client's roots.
func (t *initializer) bootstrapFromRoots(ctx context.Context, req *mcp.ToolRequest, in *initializeInput) error {
	if t.transport != "stdio" || in.Type != initFirstCall || in.AnyWorkspacePath != "" || in.TaskIDToResume != "" {
		return nil
	}
	if in.ThreadID != "" {
		if _, err := t.sessions.ByThread(req.Caller().Principal, in.ThreadID); err == nil {
			return nil // reattaches to its own workspace
		}
		if _, ok := session.RecallThread(t.principalDir(req.Caller().Principal), in.ThreadID); ok {
			return nil // a thread an earlier adapter bound: back to its workspace
		}
	}
	root, ok, err := t.roots.workspace(ctx, req)
	if err != nil {
		return err
	}
	if ok {
		in.AnyWorkspacePath = root
	}
	return nil
}
