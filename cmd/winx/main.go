// Command winx is the Winx MCP adapter: it serves the catalog over stdio (the
// default) or over Streamable HTTP with a bearer token (`winx serve --http`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"winx/auth"
	"winx/cmd/internal/buildid"
	"winx/cmd/internal/entry"
	"winx/evidence/redact"
	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/tools"
	"winx/pty/sandbox"
)

// errUsage marks a command line that was rejected and already explained.
var errUsage = errors.New("winx: usage")

// HTTP server limits against slow or abusive clients.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	shutdownGrace     = 30 * time.Second
)

type serveOptions struct {
	http             bool
	bind             string
	tokenFile        string
	allowNonLoopback bool
	allowedHosts     stringList
	version          bool
	// HTTP admission limits.
	maxConcurrency    int
	requestsPerMinute int
	requestTimeout    time.Duration
	allowQueryToken   bool
	maxBodyBytes      int64
	// Callers: one token source, or a principal file.
	token           string
	principalConfig string
	allowWeakToken  bool
	toolProfile     string
	allowTools      stringList
	sessionAffinity string
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherArg {
		// The shell launcher of WINX_SANDBOX=1: it confines its own thread
		// and becomes the shell, so it runs before anything else starts.
		err := sandbox.RunLauncher(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	entry.Exit(err, errUsage, "")
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "report" {
		return runReport(args[1:], stdout, stderr)
	}
	if len(args) > 0 && isOperatorCommand(args[0]) {
		return runOperator(ctx, args[0], args[1:], os.Getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	var opts serveOptions
	fs := flag.NewFlagSet("winx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&opts.version, "version", false, "print the build identity and exit")
	fs.BoolVar(&opts.http, "http", false, "serve Streamable HTTP instead of stdio")
	fs.StringVar(&opts.bind, "bind", "127.0.0.1:8000", "HTTP listen address")
	fs.StringVar(&opts.tokenFile, "token-file", "", "file holding the bearer token (regular file, mode 0600, at least 32 bytes)")
	fs.BoolVar(&opts.allowNonLoopback, "allow-non-loopback", false, "allow binding an address that is not loopback")
	fs.Var(&opts.allowedHosts, "allowed-host", "extra host name accepted in Host and Origin headers (repeatable)")
	fs.IntVar(&opts.maxConcurrency, "max-concurrency", 32, "HTTP requests served at once; more get 503")
	fs.IntVar(&opts.requestsPerMinute, "requests-per-minute", 120, "HTTP requests per minute per source IP; more get 429")
	fs.Int64Var(&opts.maxBodyBytes, "max-body-bytes", mcp.DefaultMaxBodyBytes, "largest HTTP request body; larger gets 413")
	fs.DurationVar(&opts.requestTimeout, "request-timeout", 120*time.Second, "time for an HTTP request to start its answer; later gets 408")
	fs.StringVar(&opts.token, "token", "", "the bearer token itself (prefer --token-file or WINX_HTTP_TOKEN: arguments are visible to other users)")
	fs.StringVar(&opts.principalConfig, "principal-config", "", "TOML file of [[principals]] (name, token_file or token_env, tool_profile or allowed_tools)")
	fs.BoolVar(&opts.allowWeakToken, "allow-weak-token", false, "accept tokens shorter than 32 bytes")
	fs.StringVar(&opts.sessionAffinity, "session-affinity", tools.AffinityWorkspace,
		"which calls share a shell: workspace (principal + workspace), conversation (HTTP conversation, else thread) or thread")
	fs.StringVar(&opts.toolProfile, "tool-profile", "full", "tools offered: full, coding, read-only or terminal")
	fs.Var(&opts.allowTools, "allow-tool", "offer exactly these tools (repeatable; replaces --tool-profile)")
	fs.BoolVar(&opts.allowQueryToken, "allow-query-token", false, "also accept the token as ?access_token= (it may end up in proxy logs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: winx [serve] [--http --bind ADDR --token-file FILE] [--version]")
		fmt.Fprintln(stderr, "       winx list | attach <thread> [--follow] | kill <thread>|--all | prune [--idle-seconds N] | restart-daemon | doctor")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "winx: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	switch opts.sessionAffinity {
	case tools.AffinityWorkspace, tools.AffinityConversation, tools.AffinityThread:
	default:
		fmt.Fprintf(stderr, "winx: --session-affinity %q is not one of workspace, conversation, thread\n", opts.sessionAffinity)
		return errUsage
	}
	id := buildid.Read()
	if opts.version {
		fmt.Fprintln(stdout, "winx", id.String())
		return nil
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	info := mcp.Implementation{Name: "winx", Title: "Winx for Go", Version: id.Version}
	confine, err := sandboxArgv(os.Getenv, sandbox.Probe, os.Executable, logger)
	if err != nil {
		return err
	}
	shells, err := shellRuntime(runtime.Options{
		Shell:      os.Getenv("WINX_SHELL"),
		NoRedact:   os.Getenv("WINX_NO_REDACT") == "1",
		NoCompress: os.Getenv("WINX_NO_COMPRESS") == "1",
		BaseEnv:    shellEnv(os.Environ()),
		Logger:     logger,
		Sandbox:    confine,
	}, os.Getenv, id, logger)
	if err != nil {
		return err
	}
	sessions := tools.NewSessions(shells, time.Now)
	defer sessions.Close()
	allowPaths, err := auth.ParseAllowPaths(os.Getenv("WINX_ALLOW_PATHS"))
	if err != nil {
		return fmt.Errorf("winx: WINX_ALLOW_PATHS: %w", err)
	}
	catalog := tools.Options{
		Build:              id.String(),
		Transport:          "stdio",
		Sessions:           sessions,
		AllowPaths:         allowPaths,
		Affinity:           opts.sessionAffinity,
		StateDir:           stateDir(),
		Redactor:           redact.New(os.Getenv("WINX_NO_REDACT") == "1"),
		KeepTailPipe:       os.Getenv("WINX_KEEP_TAIL_PIPE") == "1",
		OpenContext:        os.Getenv("WINX_OPEN_CONTEXT") == "1",
		ServerInstructions: os.Getenv("WINX_SERVER_INSTRUCTIONS"),
		Read: tools.ReadOptions{
			CodingTokenBudget:    envInt("WINX_CODING_TOKEN_BUDGET"),
			NonCodingTokenBudget: envInt("WINX_NONCODING_TOKEN_BUDGET"),
			Parallelism:          envInt("WINX_READ_PARALLELISM"),
		},
	}
	serverOpts := &mcp.ServerOptions{Logger: logger, Instructions: tools.Instructions(catalog.ServerInstructions)}
	if path := os.Getenv("WINX_USAGE_LOG"); path != "" {
		ulog, err := openUsageLog(path, id.String())
		if err != nil {
			return err
		}
		defer ulog.Close()
		serverOpts.ToolObserver = usageObserver(ulog, logger)
	}
	if !opts.http {
		reg := tools.NewRegistry(catalog)
		profile, err := callerProfile(reg, &opts)
		if err != nil {
			return err
		}
		srv := mcp.NewServer(info, reg, serverOpts)
		return srv.ServeStdio(ctx, stdin, stdout, &mcp.StdioOptions{Caller: mcp.Caller{Profile: profile}})
	}
	catalog.Transport = "http"
	reg := tools.NewRegistry(catalog)
	authn, err := newHTTPAuth(reg, &opts, os.Getenv("WINX_HTTP_TOKEN"), stderr)
	if err != nil {
		return err
	}
	srv := mcp.NewServer(info, reg, serverOpts)
	return serveHTTP(ctx, srv, authn, &opts, logger, stderr)
}

// callerProfile is the profile of the local (stdio) or single-token caller:
// --allow-tool names replace --tool-profile; an unknown name stops start-up.
func callerProfile(reg *mcp.Registry, opts *serveOptions) (mcp.Profile, error) {
	if len(opts.allowTools) == 0 {
		if _, ok := tools.Profiles()[opts.toolProfile]; !ok {
			return mcp.Profile{}, fmt.Errorf("winx: unknown --tool-profile %q (want full, coding, read-only or terminal)", opts.toolProfile)
		}
		return tools.ProfileFor(opts.toolProfile, nil), nil
	}
	p := tools.ProfileFor("", opts.allowTools)
	if err := p.Validate(reg); err != nil {
		return mcp.Profile{}, fmt.Errorf("winx: --allow-tool: %w", err)
	}
	return p, nil
}

func serveHTTP(ctx context.Context, srv *mcp.Server, authn mcp.Authenticator, opts *serveOptions, logger *slog.Logger, stderr io.Writer) error {
	host, _, err := net.SplitHostPort(opts.bind)
	if err != nil {
		return fmt.Errorf("winx: --bind %q: %w", opts.bind, err)
	}
	if !isLoopback(host) && !opts.allowNonLoopback {
		return fmt.Errorf("winx: refusing to bind %s: not a loopback address (use --allow-non-loopback behind an authenticating proxy)", opts.bind)
	}
	allowed := append([]string(nil), opts.allowedHosts...)
	if ip := net.ParseIP(host); host != "" && !isLoopback(host) && (ip == nil || !ip.IsUnspecified()) {
		allowed = append(allowed, host)
	}
	if opts.maxConcurrency < 1 || opts.requestsPerMinute < 0 || opts.requestTimeout < 0 || opts.maxBodyBytes < 1 {
		fmt.Fprintln(stderr, "winx: --max-concurrency and --max-body-bytes must be at least 1; --requests-per-minute and --request-timeout must not be negative")
		return errUsage
	}
	handler := mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{
		Auth:         authn,
		AllowedHosts: allowed,
		MaxBodyBytes: opts.maxBodyBytes,
	})
	g := newGuard(guardOptions{
		maxConcurrency:    opts.maxConcurrency,
		requestsPerMinute: opts.requestsPerMinute,
		requestTimeout:    opts.requestTimeout,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.wrap(handler))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if g.draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	ln, err := net.Listen("tcp", opts.bind)
	if err != nil {
		return fmt.Errorf("winx: listen: %w", err)
	}
	// Streams (subscriptions, legacy GET streams) live as long as their
	// request context; cancelling the base context on shutdown ends them so
	// that Shutdown can drain the rest.
	streamCtx, endStreams := context.WithCancel(context.WithoutCancel(ctx))
	defer endStreams()
	hs := &http.Server{
		Handler:           mux,
		BaseContext:       func(net.Listener) context.Context { return streamCtx },
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("serving Streamable HTTP", "addr", ln.Addr().String(), "endpoint", "/mcp")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Drain: new requests get 503 while the running ones finish; then the
	// streams are ended and the server shuts down.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	logger.Info("draining", "active", g.active.Load())
	g.drain(shutdownCtx)
	hs.RegisterOnShutdown(endStreams)
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("winx: shutdown: %w", err)
	}
	return nil
}

// stateDir is where receipts and undo records live: $XDG_STATE_HOME/winx,
// else ~/.local/state/winx; "" (no home) disables them.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "winx")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "state", "winx")
}

// envInt reads a positive integer setting; anything else means the default.
func envInt(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// secretEnv names variables that hold winx's own credentials; shells the
// model drives must not inherit them.
var secretEnv = []string{"WINX_HTTP_TOKEN"}

// shellEnv is the environment of session shells: the adapter's own, minus
// its credentials.
func shellEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(secretEnv, name) {
			out = append(out, kv)
		}
	}
	return out
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
