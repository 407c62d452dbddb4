package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"time"

	"winx/auth"
	"winx/auth/admission"
	"winx/cmd/internal/buildid"
	"winx/cmd/internal/config"
	"winx/cmd/internal/oplog"
	"winx/evidence/redact"
	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/httpserve"
	"winx/mcp/session"
	"winx/mcp/tools"
	wspace "winx/mcp/workspace"
	"winx/pty/sandbox"
)

// serve runs the MCP server over stdio, or over HTTP with c.HTTP, until ctx
// ends or stdin does.
func serve(ctx context.Context, c *config.Serve, id buildid.Identity, stdin io.Reader, stdout, stderr io.Writer) error {
	logger := oplog.New(stderr, c.Log.Level, c.Log.Format)
	shell, err := config.ResolveShell(c.Shell, exec.LookPath)
	if err != nil {
		return err
	}
	var warnings []string
	if shell.Warning != "" {
		logger.Warn("shell fallback", "asked", c.Shell, "using", shell.Name)
		warnings = append(warnings, shell.Warning)
	}
	info := mcp.Implementation{Name: "winx", Title: "Winx for Go", Version: id.Version, Icons: serverIcons()}
	confine, err := sandboxArgv(c.Sandbox, c.Getenv, sandbox.Probe, os.Executable, logger)
	if err != nil {
		return err
	}
	// This binary runs the Landlock launcher (main dispatches
	// sandbox.LauncherArg), for the sandbox and architect's read-only shell.
	self, _ := os.Executable()
	shells, err := shellRuntime(runtime.Options{
		Launcher:   self,
		Shell:      shell.Name,
		NoRedact:   c.NoRedact,
		NoCompress: c.NoCompress,
		BaseEnv:    c.ShellEnv,
		Logger:     logger,
		Sandbox:    confine,
		// Checked by sandboxArgv: allow, deny or empty.
		SandboxDenyNetwork: confine != nil && c.Getenv(sandbox.EnvNetwork) == sandbox.NetworkDeny,
		StateDir:           c.StateDir,
	}, c, id)
	if err != nil {
		return err
	}
	sessions := session.NewSessions(shells, time.Now)
	defer sessions.Close()
	// The scratch playgrounds and the managed worktrees live under the
	// state directory and stay usable; the rest of it (the worktrees'
	// records among it), and every credential file, is refused.
	protected, err := auth.NewProtected(c.Protect, []string{session.ScratchRootOr(""), wspace.WorktreesDir(c.StateDir)})
	if err != nil {
		return err
	}
	catalog := tools.Options{
		Build:              id.String(),
		Transport:          "stdio",
		Sessions:           sessions,
		AllowPaths:         c.AllowPaths,
		Protected:          protected,
		Affinity:           c.SessionAffinity,
		StateDir:           c.StateDir,
		Redactor:           redact.New(c.NoRedact),
		KeepTailPipe:       c.KeepTailPipe,
		TurnRecognizer:     c.TurnRecognizer,
		OpenContext:        c.OpenContext,
		ServerInstructions: c.ServerInstructions,
		Warnings:           warnings,
		Read: tools.ReadOptions{
			CodingTokenBudget:    c.CodingTokenBudget,
			NonCodingTokenBudget: c.NonCodingTokenBudget,
			Parallelism:          c.ReadParallelism,
		},
	}
	serverOpts := &mcp.ServerOptions{Logger: logger, Instructions: tools.Instructions(catalog.ServerInstructions)}
	observers := []func(mcp.ToolCallRecord){opLogObserver(logger)}
	var observeHTTP func(oplog.HTTPRequest)
	if c.UsageLog != "" {
		if serverOpts.ArgsKey, err = usageArgsKey(c.StateDir); err != nil {
			return err
		}
		ulog, err := openUsageLog(c, id.String())
		if err != nil {
			return err
		}
		defer ulog.Close()
		observers = append(observers, usageObserver(ulog, logger))
		observeHTTP = usageHTTPObserver(ulog, logger)
	}
	serverOpts.ToolObserver = func(r mcp.ToolCallRecord) {
		for _, o := range observers {
			o(r)
		}
	}
	if !c.HTTP {
		reg := tools.NewRegistry(catalog)
		profile, err := callerProfile(reg, c)
		if err != nil {
			return err
		}
		srv := mcp.NewServer(info, reg, serverOpts)
		return srv.ServeStdio(ctx, stdin, stdout, &mcp.StdioOptions{Caller: mcp.Caller{Profile: profile}})
	}
	catalog.Transport = "http"
	reg := tools.NewRegistry(catalog)
	authn, err := httpserve.NewAuthenticator(httpserve.Credentials{
		TokenFile: c.TokenFile, Token: c.Token, EnvToken: c.HTTPToken, PrincipalConfig: c.PrincipalConfig,
		AllowWeakToken: c.AllowWeakToken, AllowQueryToken: c.AllowQueryToken, Getenv: c.Getenv,
	}, httpserve.AuthOptions{
		KnownTools:    reg.ToolNames(),
		Profiles:      tools.Profiles(),
		ProfileFor:    tools.ProfileFor,
		SingleProfile: func() (mcp.Profile, error) { return callerProfile(reg, c) },
	})
	if err != nil {
		return err
	}
	srv := mcp.NewServer(info, reg, serverOpts)
	ln, err := httpserve.Listen(c.Bind, c.AllowNonLoopback)
	if err != nil {
		return err
	}
	return httpserve.Serve(ctx, ln, srv, authn, &httpserve.Options{
		Bind:             c.Bind,
		AllowNonLoopback: c.AllowNonLoopback,
		AllowedHosts:     c.AllowedHosts,
		MaxBodyBytes:     c.MaxBodyBytes,
		Admission: admission.Options{
			MaxConcurrency:    c.MaxConcurrency,
			RequestsPerMinute: c.RequestsPerMinute,
			RequestTimeout:    c.RequestTimeout,
			BytesPerSecond:    bytesPerSecond(c.BodyBytesPerSecond),
			BytesBurst:        c.BodyBurstBytes,
		},
		Logger: logger,
		REST:   c.REST,
		Wrap:   func(h http.Handler) http.Handler { return oplog.Handler(logger, observeHTTP, h) },
	})
}

// opLogObserver writes one operational log line per finished tool call:
// its tool, principal hash, status, duration and size, never its
// arguments or output.
func opLogObserver(logger *slog.Logger) func(mcp.ToolCallRecord) {
	return func(r mcp.ToolCallRecord) {
		status := r.Status
		switch {
		case r.ProtocolError:
			status = "protocol_error"
		case status == "" && r.IsError:
			status = "tool_error"
		}
		oplog.LogToolCall(logger, oplog.ToolCall{
			Tool: r.Tool, Principal: r.Principal, Status: status, ErrorCode: r.ErrorCode,
			Duration: r.Duration, Bytes: r.ResponseBytes, RequestID: r.RequestID,
		})
	}
}

// callerProfile is the profile of the local (stdio) or single-token caller:
// --allow-tool names replace --tool-profile; an unknown name stops start-up.
func callerProfile(reg *mcp.Registry, c *config.Serve) (mcp.Profile, error) {
	if len(c.AllowTools) == 0 {
		if _, ok := tools.Profiles()[c.ToolProfile]; !ok {
			return mcp.Profile{}, fmt.Errorf("winx: unknown --tool-profile %q (want full, coding, read-only or terminal)", c.ToolProfile)
		}
		return tools.ProfileFor(c.ToolProfile, nil), nil
	}
	p := tools.ProfileFor("", c.AllowTools)
	if err := p.Validate(reg); err != nil {
		return mcp.Profile{}, fmt.Errorf("winx: --allow-tool: %w", err)
	}
	return p, nil
}

// bytesPerSecond maps --body-bytes-per-second to admission's option, where
// 0 is the default and a negative rate is none.
func bytesPerSecond(flag int64) int64 {
	if flag == 0 {
		return -1
	}
	return flag
}
