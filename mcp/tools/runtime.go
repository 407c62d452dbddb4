package tools

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"winx/evidence/redact"
	"winx/guardian"
	"winx/mcp/session"
)

// RuntimeOptions configure the embedded shell runtime. They are read once
// at start-up from the environment by the caller.
type RuntimeOptions struct {
	Shell      string   // WINX_SHELL: "bash" (default) or "zsh"
	NoRedact   bool     // WINX_NO_REDACT=1
	NoCompress bool     // WINX_NO_COMPRESS=1
	BaseEnv    []string // the environment shells inherit
	Logger     *slog.Logger
	// Sandbox, if set, wraps the argument vector of every process a session
	// starts so that it runs confined to the session's workspace root (see
	// package pty/sandbox; WINX_SANDBOX=1).
	Sandbox func(workspace string, argv []string) ([]string, error)
}

// EmbeddedShells returns a ShellFactory that runs guardian sessions in this
// process: sessions live as long as the adapter. Output of each session is
// shaped with its workspace's .winx/scratch for dropped heads.
func EmbeddedShells(o RuntimeOptions) session.ShellFactory {
	redactor := redact.New(o.NoRedact)
	return func(ctx context.Context, dir string, env []string) (session.Shell, error) {
		root := dir
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "WINX_WORKSPACE_ROOT="); ok {
				root = v
			}
		}
		var wrap func([]string) ([]string, error)
		if o.Sandbox != nil {
			wrap = func(argv []string) ([]string, error) { return o.Sandbox(root, argv) }
		}
		return guardian.NewSession(ctx, guardian.Options{
			Shell:  o.Shell,
			Dir:    dir,
			Env:    append(append([]string(nil), o.BaseEnv...), env...),
			Logger: o.Logger,
			Shape: guardian.ShapeOptions{
				ScratchDir: filepath.Join(root, ".winx", "scratch"),
				NoCompress: o.NoCompress,
				Redactor:   redactor,
			},
			WrapArgv: wrap,
		})
	}
}
