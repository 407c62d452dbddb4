package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"winx/auth"
	"winx/cmd/internal/entry"
	"winx/guardian"
	"winx/guardian/daemon/operator"
	"winx/guardian/wire"
	"winx/mcp/usage"
)

// Values of WINX_RUNTIME.
const (
	RuntimeDaemon   = "daemon"
	RuntimeEmbedded = "embedded"
)

// Commands of winx besides the operator ones.
const (
	CommandServe  = "serve"
	CommandReport = "report"
	// CommandHelp prints the usage on stdout (`winx help`); `winx version`
	// is serve's --version.
	CommandHelp    = "help"
	CommandVersion = "version"
)

// Catalog is what the adapter's flags need from the tool catalog.
type Catalog struct {
	Affinities   []string // valid --session-affinity values; the first is the default
	MaxBodyBytes int64    // default of --max-body-bytes
}

// Adapter is winx's configuration: one command and its settings.
type Adapter struct {
	Command string // CommandServe, CommandReport or an operator command
	// HelpTopic is the operator command `winx help <command>` asks about;
	// "" for the whole help.
	HelpTopic string
	Serve     Serve            // when Command is CommandServe
	Report    Report           // when Command is CommandReport
	Worktree  Worktrees        // when Command is CommandWorktrees
	Operator  operator.Command // when Command is an operator command
	// OperatorOptions is the rest of an operator command's configuration;
	// Stdout is left to the caller.
	OperatorOptions operator.Options
}

// Serve is `winx [serve]`: the flags, then the environment.
type Serve struct {
	Version bool // --version: print the build identity and exit; nothing below is read

	HTTP             bool     // --http
	REST             bool     // --rest: the REST tool API under /api/ (needs HTTP)
	Bind             string   // --bind
	AllowNonLoopback bool     // --allow-non-loopback
	AllowedHosts     []string // --allowed-host
	// HTTP admission limits.
	MaxConcurrency    int           // --max-concurrency, at least 1
	RequestsPerMinute int           // --requests-per-minute, not negative
	RequestTimeout    time.Duration // --request-timeout, not negative
	MaxBodyBytes      int64         // --max-body-bytes, at least 1
	// BodyBytesPerSecond is --body-bytes-per-second: a principal's body
	// byte rate, 0 for none; BodyBurstBytes (--body-burst-bytes) its burst,
	// 0 for the larger of --max-body-bytes and 64 MiB.
	BodyBytesPerSecond int64
	BodyBurstBytes     int64
	// Callers: with HTTP exactly one of TokenFile, Token, HTTPToken or
	// PrincipalConfig.
	TokenFile       string
	Token           string
	HTTPToken       string // WINX_HTTP_TOKEN
	PrincipalConfig string
	AllowWeakToken  bool
	AllowQueryToken bool
	ToolProfile     string   // --tool-profile
	AllowTools      []string // --allow-tool; replaces ToolProfile
	SessionAffinity string   // --session-affinity

	// TurnRecognizer is WINX_TURN_RECOGNIZER_CONFIG, checked here; nil
	// when unset.
	TurnRecognizer *guardian.TurnRecognizer

	Runtime            string   // RuntimeDaemon or RuntimeEmbedded (WINX_RUNTIME, WINX_EMBEDDED)
	Shell              string   // WINX_SHELL, as given (ResolveShell resolves it)
	ShellArgs          []string // WINX_SHELL_ARGS, checked here; shells read it from their environment
	Log                Log      // WINX_LOG, WINX_LOG_FORMAT
	NoRedact           bool     // WINX_NO_REDACT
	NoCompress         bool     // WINX_NO_COMPRESS
	KeepTailPipe       bool     // WINX_KEEP_TAIL_PIPE
	OpenContext        bool     // WINX_OPEN_CONTEXT
	Sandbox            bool     // WINX_SANDBOX; the paths are the policy's (pty/sandbox)
	AllowPaths         []string // WINX_ALLOW_PATHS, parsed
	ServerInstructions string   // WINX_SERVER_INSTRUCTIONS
	// ReadFiles budgets; 0 means the default.
	CodingTokenBudget    int // WINX_CODING_TOKEN_BUDGET
	NonCodingTokenBudget int // WINX_NONCODING_TOKEN_BUDGET
	ReadParallelism      int // WINX_READ_PARALLELISM
	StateDir             string
	UsageLog             string        // WINX_USAGE_LOG; "" means none
	Usage                usage.Options // WINX_USAGE_LOG_ROTATION, WINX_USAGE_LOG_KEEP_DAYS
	WinxdBin             string        // WINXD_BIN, else winxd next to winx
	// Protect lists the paths no file tool may touch, for any principal:
	// the token file, the principal config and its token files, the state
	// directory (absolute paths; see auth.Protected).
	Protect []string
	// ShellEnv is the environment of session shells and of the winxd winx
	// starts: winx's own minus every credential source (WINX_HTTP_TOKEN,
	// the principals' token_env variables, any variable holding one of
	// their values or --token's).
	ShellEnv []string
	// CredentialEnv names the variables a token reaches serve through:
	// WINX_HTTP_TOKEN with --http, and the principals' token_env
	// variables. winx re-executes itself without them (and without
	// ShellEnv's other drops) and hands their values over in memory.
	CredentialEnv []string
	// Getenv is the lookup the configuration was read with, for the
	// packages that read variables of their own.
	Getenv func(string) string
}

// Report is `winx report`.
type Report struct {
	Log          string // --log, default WINX_USAGE_LOG
	Last         int    // --last
	SinceMinutes int    // --since-minutes
}

// LoadAdapter reads winx's command line (without the program name) and
// environment. A rejected command line or environment is explained on stderr
// and returns an error matching ErrUsage; other errors (a malformed path
// list, an unknown runtime) are returned to be printed.
func LoadAdapter(args, environ []string, cat Catalog, stderr io.Writer) (*Adapter, error) {
	getenv := Lookup(environ)
	switch {
	case len(args) > 0 && args[0] == CommandReport:
		r, err := loadReport(args[1:], getenv, stderr)
		return &Adapter{Command: CommandReport, Report: r}, err
	case len(args) > 0 && args[0] == CommandWorktrees:
		w, err := loadWorktrees(args[1:], getenv, stderr)
		return &Adapter{Command: CommandWorktrees, Worktree: w}, err
	case len(args) > 0 && operator.IsCommand(args[0]):
		return loadOperator(args[0], args[1:], environ, getenv, stderr)
	case len(args) == 1 && args[0] == CommandHelp:
		return &Adapter{Command: CommandHelp}, nil
	case len(args) == 2 && args[0] == CommandHelp && operator.IsCommand(args[1]):
		return &Adapter{Command: CommandHelp, HelpTopic: args[1]}, nil
	case len(args) == 1 && args[0] == CommandVersion:
		return &Adapter{Command: CommandServe, Serve: Serve{Version: true}}, nil
	case len(args) > 0 && args[0] == CommandServe:
		args = args[1:]
	}
	s, err := loadServe(args, environ, getenv, cat, stderr)
	return &Adapter{Command: CommandServe, Serve: s}, err
}

// commandHelp lists every command of winx for --help, in the order of
// the README.
func commandHelp() [][2]string {
	return [][2]string{
		{CommandServe, "serve MCP over stdio (the default) or Streamable HTTP (--http)"},
		{CommandReport, "summarize the usage log (WINX_USAGE_LOG)"},
		{operator.List, "JSON of the live sessions"},
		{operator.Jobs, "background jobs of every session, or of one: running, exited, lost"},
		{operator.Attach, "print a session's screen (--follow keeps printing; --interactive types into it, Ctrl-] d detaches)"},
		{operator.Kill, "end a session or --all"},
		{operator.Prune, "end idle sessions (--idle-seconds N)"},
		{operator.RestartDaemon, "stop winxd and start a new one; guardians keep running"},
		{operator.Doctor, "check the runtime: sockets, binaries, builds, configuration"},
		{CommandWorktrees, "the managed git worktrees of a repository: list, changes NAME, remove NAME"},
	}
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parseFlags parses fs, returning flag.ErrHelp for -help (after fs.Usage)
// and ErrUsage for any other rejection, which it explains in one line and a
// hint, not the whole usage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	var said strings.Builder
	fs.SetOutput(&said)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	}
	fmt.Fprintf(out, "winx: %s\nrun '%s --help' for usage\n", err, fs.Name())
	return ErrUsage
}

// printDefaults is fs.PrintDefaults with the flags spelled --name, as the
// documentation spells them (the flag package accepts both).
func printDefaults(fs *flag.FlagSet) {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	fmt.Fprint(out, strings.ReplaceAll("\n"+b.String(), "\n  -", "\n  --")[1:])
}

// usagef explains a rejected configuration on stderr and returns ErrUsage.
func usagef(stderr io.Writer, format string, args ...any) error {
	fmt.Fprintf(stderr, "winx: "+format+"\n", args...)
	return ErrUsage
}

func loadServe(args, environ []string, getenv func(string) string, cat Catalog, stderr io.Writer) (Serve, error) {
	var s Serve
	var err error
	var allowedHosts, allowTools stringList
	fs := flag.NewFlagSet("winx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&s.Version, "version", false, "print the build identity and exit")
	fs.BoolVar(&s.HTTP, "http", false, "serve Streamable HTTP instead of stdio")
	fs.BoolVar(&s.REST, "rest", false, "with --http, also serve the REST tool API: GET /api/tools, POST /api/tools/call, GET /api/openapi.json")
	fs.StringVar(&s.Bind, "bind", "127.0.0.1:8000", "HTTP listen address")
	fs.StringVar(&s.TokenFile, "token-file", "", "file holding the bearer token (regular file, mode 0600, at least 32 bytes)")
	fs.BoolVar(&s.AllowNonLoopback, "allow-non-loopback", false, "allow binding an address that is not loopback")
	fs.Var(&allowedHosts, "allowed-host", "extra host name accepted in Host and Origin headers (repeatable)")
	fs.IntVar(&s.MaxConcurrency, "max-concurrency", 32, "HTTP requests served at once; more get 503")
	fs.IntVar(&s.RequestsPerMinute, "requests-per-minute", 120, "HTTP requests per minute per source IP; more get 429")
	fs.Int64Var(&s.MaxBodyBytes, "max-body-bytes", cat.MaxBodyBytes, "largest HTTP request body; larger gets 413")
	fs.Int64Var(&s.BodyBytesPerSecond, "body-bytes-per-second", 4<<20, "HTTP request body bytes per second per principal, with a burst of --body-burst-bytes; more get 429 before the body is read (0: no limit)")
	fs.Int64Var(&s.BodyBurstBytes, "body-burst-bytes", 0, "burst of --body-bytes-per-second (0: the larger of --max-body-bytes and 64 MiB)")
	fs.DurationVar(&s.RequestTimeout, "request-timeout", 120*time.Second, "time for an HTTP request to start its answer; later gets 408")
	fs.StringVar(&s.Token, "token", "", "the bearer token itself; /proc/PID/cmdline shows it to every local user until start-up blanks it there (prefer --token-file or WINX_HTTP_TOKEN)")
	fs.StringVar(&s.PrincipalConfig, "principal-config", "", "TOML file of [[principals]] (name, token_file or token_env, tool_profile or allowed_tools)")
	fs.BoolVar(&s.AllowWeakToken, "allow-weak-token", false, "accept tokens shorter than 32 bytes")
	fs.StringVar(&s.SessionAffinity, "session-affinity", cat.Affinities[0],
		"which calls share a shell: workspace (principal + workspace), conversation (HTTP conversation, else thread) or thread")
	fs.StringVar(&s.ToolProfile, "tool-profile", "full", "tools offered: full, coding, read-only or terminal")
	fs.Var(&allowTools, "allow-tool", "offer exactly these tools (repeatable; replaces --tool-profile)")
	fs.BoolVar(&s.AllowQueryToken, "allow-query-token", false, "also accept the token as ?token= or ?access_token= (it may end up in proxy logs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: winx [serve] [--http --bind ADDR --token-file FILE] [--version]")
		fmt.Fprintln(stderr, "       winx report [--log FILE] [--last N] [--since-minutes M]")
		fmt.Fprintln(stderr, "       winx list | jobs [thread] | attach <thread> [--follow|--interactive] | kill <thread>|--all | prune [--idle-seconds N] | restart-daemon | doctor")
		fmt.Fprintln(stderr, "       winx help | version")
		fmt.Fprintln(stderr, "       "+worktreesUsage)
		fmt.Fprintln(stderr, "commands:")
		for _, c := range commandHelp() {
			fmt.Fprintf(stderr, "  %-15s %s\n", c[0], c[1])
		}
		fmt.Fprintln(stderr, "flags of serve:")
		printDefaults(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return s, err
	}
	s.AllowedHosts, s.AllowTools = allowedHosts, allowTools
	if fs.NArg() > 0 {
		return s, usagef(stderr, "unexpected argument %q", fs.Arg(0))
	}
	if s.REST && !s.HTTP {
		return s, usagef(stderr, "--rest needs --http")
	}
	if !slices.Contains(cat.Affinities, s.SessionAffinity) {
		return s, usagef(stderr, "--session-affinity %q is not one of %s", s.SessionAffinity, strings.Join(cat.Affinities, ", "))
	}
	if s.Version {
		return s, nil
	}

	e := &env{getenv: getenv}
	s.Shell = getenv("WINX_SHELL")
	if s.Log, err = LoadLog(getenv); err != nil {
		e.errs = append(e.errs, err)
	}
	if s.ShellArgs, err = guardian.ParseShellArgs(getenv(guardian.ShellArgsVar)); err == nil {
		err = guardian.CheckShellArgs(s.Shell, getenv(guardian.ShellArgsVar))
	}
	if err != nil {
		e.errs = append(e.errs, &VarError{Name: guardian.ShellArgsVar, Value: getenv(guardian.ShellArgsVar), Err: err})
	}
	s.NoRedact = e.bool("WINX_NO_REDACT")
	s.NoCompress = e.bool("WINX_NO_COMPRESS")
	s.KeepTailPipe = e.bool("WINX_KEEP_TAIL_PIPE")
	s.OpenContext = e.bool("WINX_OPEN_CONTEXT")
	if raw := getenv("WINX_TURN_RECOGNIZER_CONFIG"); raw != "" {
		if s.TurnRecognizer, err = guardian.ParseTurnRecognizer(raw); err != nil {
			e.errs = append(e.errs, &VarError{Name: "WINX_TURN_RECOGNIZER_CONFIG", Value: raw, Err: err})
		}
	}
	s.Sandbox = e.bool("WINX_SANDBOX")
	embedded := e.bool("WINX_EMBEDDED")
	// Every other documented range is checked here too, winxd's included:
	// the adapter hands its environment to the winxd it starts, whose
	// refusal an agent would otherwise meet only as "winxd did not start".
	reported := map[string]bool{}
	for _, err := range e.errs {
		var ve *VarError
		if errors.As(err, &ve) {
			reported[ve.Name] = true
		}
	}
	for _, v := range Variables() {
		if val := getenv(v.Name); val != "" && v.Check != nil && !reported[v.Name] {
			if err := v.Check(v.Name, val); err != nil {
				e.errs = append(e.errs, err)
			}
		}
	}
	if len(e.errs) > 0 {
		for _, err := range e.errs {
			fmt.Fprintf(stderr, "winx: %v\n", err)
		}
		return s, fmt.Errorf("%w: %w", ErrUsage, errors.Join(e.errs...))
	}
	if s.HTTP {
		s.HTTPToken = getenv("WINX_HTTP_TOKEN")
		if err := checkHTTP(&s, stderr); err != nil {
			return s, err
		}
	}
	if s.Runtime, err = runtimeName(getenv("WINX_RUNTIME"), embedded); err != nil {
		return s, err
	}
	if s.AllowPaths, err = auth.ParseAllowPaths(getenv("WINX_ALLOW_PATHS")); err != nil {
		return s, fmt.Errorf("winx: WINX_ALLOW_PATHS: %w", err)
	}
	s.ServerInstructions = getenv("WINX_SERVER_INSTRUCTIONS")
	s.CodingTokenBudget = budget(getenv, "WINX_CODING_TOKEN_BUDGET")
	s.NonCodingTokenBudget = budget(getenv, "WINX_NONCODING_TOKEN_BUDGET")
	s.ReadParallelism = budget(getenv, "WINX_READ_PARALLELISM")
	s.StateDir = wire.StateDir(getenv)
	if s.UsageLog = getenv("WINX_USAGE_LOG"); s.UsageLog != "" {
		// WINX_USAGE_LOG_ROTATION and WINX_USAGE_LOG_KEEP_DAYS are the
		// documented names; the older WINX_USAGE_ROTATION and
		// WINX_USAGE_RETENTION_DAYS still work when the new ones are unset.
		s.Usage.Rotation = firstSet(getenv, "WINX_USAGE_LOG_ROTATION", "WINX_USAGE_ROTATION")
		name := "WINX_USAGE_LOG_KEEP_DAYS"
		if getenv(name) == "" && getenv("WINX_USAGE_RETENTION_DAYS") != "" {
			name = "WINX_USAGE_RETENTION_DAYS"
		}
		days, set, err := ParseInt(name, getenv(name), 0)
		if err != nil {
			return s, fmt.Errorf("winx: %s must be a number of days, not %q", name, getenv(name))
		}
		if s.Usage.RetentionDays = days; set && days == 0 {
			s.Usage.RetentionDays = usage.KeepForever
		}
	}
	s.WinxdBin = entry.SiblingBinary(getenv("WINXD_BIN"), "winxd")
	// The principals' credential sources are read here, before the
	// principal file is loaded, because the shells' environment and the
	// file tools' deny list are fixed first. A file that cannot be read
	// names nothing; loading it fails the start anyway.
	var tokenEnvs, tokenFiles []string
	if s.PrincipalConfig != "" {
		tokenEnvs, tokenFiles, _ = auth.CredentialSources(s.PrincipalConfig)
	}
	s.Protect = protectedPaths(s, tokenFiles)
	s.ShellEnv = shellEnv(environ, tokenEnvs, []string{s.Token})
	if s.HTTP {
		s.CredentialEnv = append(slices.Clone(secretEnv), tokenEnvs...)
	}
	s.Getenv = getenv
	return s, nil
}

// firstSet is the value of the first of names that is set.
func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// protectedPaths is Serve.Protect: every credential file the configuration
// names, the state directory (contexts, receipts and the daemon's records
// of every principal), and the server's own /proc directory, whose environ
// and mem the server itself may always read (auth.NewProtected resolves
// /proc/self to /proc/PID of the process that builds the list).
func protectedPaths(s Serve, tokenFiles []string) []string {
	out := []string{"/proc/self"}
	for _, p := range append([]string{s.TokenFile, s.PrincipalConfig, s.StateDir}, tokenFiles...) {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// checkHTTP refuses HTTP settings that cannot work together.
func checkHTTP(s *Serve, stderr io.Writer) error {
	sources := 0
	for _, set := range []bool{s.TokenFile != "", s.Token != "", s.HTTPToken != "", s.PrincipalConfig != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return usagef(stderr, "--http needs exactly one of --token-file, --token, WINX_HTTP_TOKEN or --principal-config")
	}
	if s.PrincipalConfig != "" && len(s.AllowTools) > 0 {
		return usagef(stderr, "--allow-tool does not combine with --principal-config; give each principal allowed_tools")
	}
	if s.MaxConcurrency < 1 || s.RequestsPerMinute < 0 || s.RequestTimeout < 0 || s.MaxBodyBytes < 1 || s.BodyBytesPerSecond < 0 || s.BodyBurstBytes < 0 {
		return usagef(stderr, "--max-concurrency and --max-body-bytes must be at least 1; --requests-per-minute, --request-timeout, --body-bytes-per-second and --body-burst-bytes must not be negative")
	}
	return nil
}

// runtimeName is the session runtime WINX_RUNTIME selects: the daemon one
// unless it is "embedded", or it is unset and WINX_EMBEDDED is true.
func runtimeName(rt string, embedded bool) (string, error) {
	switch {
	case rt == RuntimeEmbedded, rt == "" && embedded:
		return RuntimeEmbedded, nil
	case rt == "" || rt == RuntimeDaemon:
		return RuntimeDaemon, nil
	default:
		return "", fmt.Errorf("winx: WINX_RUNTIME %q is not %s or %s", rt, RuntimeDaemon, RuntimeEmbedded)
	}
}

func loadReport(args []string, getenv func(string) string, stderr io.Writer) (Report, error) {
	var r Report
	fs := flag.NewFlagSet("winx report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&r.Log, "log", getenv("WINX_USAGE_LOG"), "usage log (default $WINX_USAGE_LOG)")
	fs.IntVar(&r.Last, "last", 0, "only the newest N calls (0 = all)")
	fs.IntVar(&r.SinceMinutes, "since-minutes", 0, "only calls from the last M minutes (0 = all)")
	if err := parseFlags(fs, args); err != nil {
		return r, err
	}
	if r.Log == "" && fs.NArg() == 0 {
		fmt.Fprintln(stderr, "winx: report: no usage log: set WINX_USAGE_LOG (where winx serve writes it) or pass --log FILE")
		return r, ErrUsage
	}
	if fs.NArg() > 0 || r.Last < 0 || r.SinceMinutes < 0 {
		fmt.Fprintln(stderr, "usage: winx report [--log FILE] [--last N] [--since-minutes M]")
		return r, ErrUsage
	}
	return r, nil
}

// loadOperator parses an operator command. Flags may follow the thread
// argument. The runtime is not required to be valid: doctor reports it.
func loadOperator(name string, args, environ []string, getenv func(string) string, stderr io.Writer) (*Adapter, error) {
	a := &Adapter{Command: name, Operator: operator.Command{Name: name}}
	fs := flag.NewFlagSet("winx "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	idle := int64(-1)
	switch name {
	case operator.Prune:
		fs.Int64Var(&idle, "idle-seconds", -1, "prune guardians idle at least this long (default: the TTL tiers, 30 min never used, 24 h used)")
	case operator.Attach:
		fs.BoolVar(&a.Operator.Follow, "follow", false, "keep printing new output until interrupted")
		fs.BoolVar(&a.Operator.Interactive, "interactive", false, "take the wheel: type into the session's live shell from this terminal (detach: Ctrl-] then d)")
	case operator.Kill:
		fs.BoolVar(&a.Operator.All, "all", false, "kill every session")
	}
	usage := map[string]string{
		operator.List: "winx list", operator.Jobs: "winx jobs [thread]", operator.Attach: "winx attach <thread> [--follow | --interactive]", operator.Kill: "winx kill <thread> | --all",
		operator.Prune: "winx prune [--idle-seconds N]", operator.RestartDaemon: "winx restart-daemon", operator.Doctor: "winx doctor",
	}[name]
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage:", usage)
		printDefaults(fs)
		if name == operator.Attach {
			fmt.Fprint(stderr, operator.InteractiveHelp)
		}
	}
	var rest []string
	for next := args; ; {
		if err := parseFlags(fs, next); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		next = fs.Args()[1:]
	}
	wantArgs := 0
	if name == operator.Attach || (name == operator.Kill && !a.Operator.All) {
		wantArgs = 1
	}
	if name == operator.Jobs && len(rest) <= 1 {
		wantArgs = len(rest) // the thread is optional
	}
	if len(rest) != wantArgs || idle < -1 || (a.Operator.Follow && a.Operator.Interactive) {
		fs.Usage()
		return nil, ErrUsage
	}
	if wantArgs == 1 {
		a.Operator.Thread = rest[0]
	}
	if idle >= 0 {
		d := time.Duration(idle) * time.Second
		a.Operator.Idle = &d
	}
	paths, err := wire.Resolve(getenv)
	if err != nil {
		return nil, err
	}
	embedded, embErr := ParseBool("WINX_EMBEDDED", getenv("WINX_EMBEDDED"))
	rt, rtErr := runtimeName(getenv("WINX_RUNTIME"), embedded)
	if embErr != nil {
		rtErr = embErr
	}
	noRedact, _ := ParseBool("WINX_NO_REDACT", getenv("WINX_NO_REDACT"))
	a.OperatorOptions = operator.Options{
		Paths:       paths,
		WinxdBin:    entry.SiblingBinary(getenv("WINXD_BIN"), "winxd"),
		GuardianBin: entry.SiblingBinary(getenv("WINX_GUARDIAN_BIN"), "winx-guardian"),
		DaemonEnv:   shellEnv(environ, nil, nil),
		Runtime:     rt,
		RuntimeErr:  rtErr,
		Getenv:      getenv,
		// An unparsable WINX_NO_REDACT leaves redaction on.
		NoRedact: noRedact,
		Config:   Settings(getenv),
	}
	// No secret yet means no winxd ever ran here: the commands then find
	// nothing to talk to, and doctor says so.
	if path, err := wire.SecretPath(getenv); err == nil {
		a.OperatorOptions.Secret, _ = wire.LoadSecret(path)
	}
	return a, nil
}
