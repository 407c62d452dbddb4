package main

// The runtime of sessions (the daemon one by default) and the operator
// commands that manage durable sessions: list, attach, kill, prune,
// restart-daemon and doctor.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"winx/cmd/internal/buildid"
	"winx/cmd/internal/entry"
	"winx/evidence/redact"
	"winx/guardian"
	"winx/guardian/daemon"
	"winx/guardian/remote"
	"winx/guardian/runtime"
	"winx/guardian/wire"
)

// Values of WINX_RUNTIME.
const (
	runtimeDaemon   = "daemon"
	runtimeEmbedded = "embedded"
)

// Operator command limits.
const (
	operatorTimeout = 30 * time.Second       // one list, kill, prune or doctor
	followInterval  = 500 * time.Millisecond // how often attach --follow looks
	restartWait     = 10 * time.Second       // for the old winxd to exit
)

// runtimeName is the session runtime the environment selects: the daemon
// one unless WINX_RUNTIME=embedded or WINX_EMBEDDED=1.
func runtimeName(getenv func(string) string) (string, error) {
	switch rt := getenv("WINX_RUNTIME"); {
	case rt == runtimeEmbedded, rt == "" && getenv("WINX_EMBEDDED") == "1":
		return runtimeEmbedded, nil
	case rt == "" || rt == runtimeDaemon:
		return runtimeDaemon, nil
	default:
		return "", fmt.Errorf("winx: WINX_RUNTIME %q is not %s or %s", rt, runtimeDaemon, runtimeEmbedded)
	}
}

// shellRuntime returns the shell factory of the selected runtime. The daemon
// runtime starts nothing yet: the first session asks winxd (starting it),
// and a winxd that cannot start fails that Initialize with an error naming
// WINXD_BIN and WINX_RUNTIME=embedded; it never falls back silently, since
// sessions that quietly die with the adapter are what the user opted out of.
// With the sandbox on (o.Sandbox), the guardians confine their shells
// themselves, with the same Landlock policy.
func shellRuntime(o runtime.Options, getenv func(string) string, id buildid.Identity, logger *slog.Logger) (runtime.Factory, error) {
	rt, err := runtimeName(getenv)
	if err != nil {
		return nil, err
	}
	if rt == runtimeEmbedded {
		return runtime.Embedded(o), nil
	}
	paths, err := wire.Resolve(getenv)
	if err != nil {
		return nil, err
	}
	return runtime.Daemon(runtime.DaemonOptions{
		Options: o,
		Socket:  paths.Daemon,
		Start:   &daemon.StartOptions{Bin: entry.SiblingBinary(getenv("WINXD_BIN"), "winxd"), Env: shellEnv(os.Environ())},
		Build:   entry.WireBuild(id),
	})
}

func isOperatorCommand(name string) bool {
	switch name {
	case "list", "attach", "kill", "prune", "restart-daemon", "doctor":
		return true
	}
	return false
}

// operator is what every operator command needs.
type operator struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	paths          wire.Paths
	build          wire.Build
	hello          wire.Hello
	fleet          *daemon.Fleet
}

func runOperator(ctx context.Context, name string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	build := entry.WireBuild(buildid.Read())
	op := &operator{getenv: getenv, stdout: stdout, stderr: stderr, build: build, hello: wire.NewHello(wire.RoleAdapter, build, nil)}
	fs := flag.NewFlagSet("winx "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		follow bool
		all    bool
		idle   = int64(-1)
	)
	if name == "prune" {
		fs.Int64Var(&idle, "idle-seconds", -1, "prune guardians idle at least this long (default: the TTL tiers, 30 min never used, 24 h used)")
	}
	if name == "attach" {
		fs.BoolVar(&follow, "follow", false, "keep printing new output until interrupted")
	}
	if name == "kill" {
		fs.BoolVar(&all, "all", false, "kill every session")
	}
	usage := map[string]string{
		"list": "winx list", "attach": "winx attach <thread> [--follow]", "kill": "winx kill <thread> | --all",
		"prune": "winx prune [--idle-seconds N]", "restart-daemon": "winx restart-daemon", "doctor": "winx doctor",
	}[name]
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage:", usage)
		fs.PrintDefaults()
	}
	// Flags may follow the thread argument: parse around it.
	var rest []string
	for a := args; ; {
		if err := fs.Parse(a); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		a = fs.Args()[1:]
	}
	wantArgs := 0
	if name == "attach" || (name == "kill" && !all) {
		wantArgs = 1
	}
	if len(rest) != wantArgs || idle < -1 {
		fs.Usage()
		return errUsage
	}
	paths, err := wire.Resolve(getenv)
	if err != nil {
		return err
	}
	op.paths = paths
	op.fleet = &daemon.Fleet{Dir: paths.Dir, Hello: op.hello}
	if name == "attach" && follow {
		return op.attach(ctx, rest[0], true)
	}
	ctx, cancel := context.WithTimeout(ctx, operatorTimeout)
	defer cancel()
	switch name {
	case "list":
		return op.list(ctx)
	case "attach":
		return op.attach(ctx, rest[0], false)
	case "kill":
		thread := ""
		if !all {
			thread = rest[0]
		}
		return op.kill(ctx, thread)
	case "prune":
		var d *time.Duration
		if idle >= 0 {
			v := time.Duration(idle) * time.Second
			d = &v
		}
		return op.prune(ctx, d)
	case "restart-daemon":
		return op.restartDaemon(ctx)
	default:
		return op.doctor(ctx)
	}
}

// listEntry is one session in `winx list`.
type listEntry struct {
	Thread          string    `json:"thread"` // the session's external id, its default thread id
	Workspace       string    `json:"workspace"`
	Principal       string    `json:"principal,omitempty"`
	Scope           string    `json:"scope,omitempty"`
	PID             int       `json:"pid"` // the guardian
	ShellPID        int       `json:"shell_pid"`
	Cwd             string    `json:"cwd"`
	Created         time.Time `json:"created"`
	LastActivity    time.Time `json:"last_activity"`
	LastCommandAt   time.Time `json:"last_command_at,omitzero"`
	LastCommand     string    `json:"last_command,omitempty"` // redacted
	EverRanCommand  bool      `json:"ever_ran_command"`
	Running         bool      `json:"running"`
	BackgroundCount int       `json:"background_count"` // still running
	Build           string    `json:"build"`
	SameBuild       bool      `json:"same_build"` // as this winx binary
	Socket          string    `json:"socket"`
}

func (op *operator) entry(g daemon.Guardian) listEntry {
	k, _ := g.Session()
	cmd, _ := redact.New(false).String(g.Status.Command)
	return listEntry{
		Thread: k.ExternalID, Workspace: k.Workspace, Principal: k.Principal, Scope: k.Scope,
		PID: g.PID, ShellPID: g.Status.ShellPID, Cwd: g.Status.Cwd,
		Created: g.Status.Created, LastActivity: g.Status.LastActivity, LastCommandAt: g.Status.LastCommand,
		LastCommand: cmd, EverRanCommand: g.Status.EverRanCommand, Running: g.Status.Running,
		BackgroundCount: g.Status.BackgroundRunning, Build: buildString(g.Build), SameBuild: g.Build == op.build,
		Socket: g.Socket,
	}
}

func buildString(b wire.Build) string {
	return buildid.Identity{Module: b.Module, Version: b.Version, Revision: b.Revision, Modified: b.Modified, GoVersion: b.GoVersion}.String()
}

func (op *operator) list(ctx context.Context) error {
	live, bad, err := op.fleet.Discover(ctx)
	if err != nil {
		return err
	}
	out := struct {
		SocketDir   string               `json:"socket_dir"`
		Sessions    []listEntry          `json:"sessions"`
		Unreachable []daemon.Unreachable `json:"unreachable,omitempty"`
	}{SocketDir: op.paths.Dir, Sessions: []listEntry{}, Unreachable: bad}
	for _, g := range live {
		out.Sessions = append(out.Sessions, op.entry(g))
	}
	enc := json.NewEncoder(op.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// find returns the live guardian a thread argument names: a session's
// external id, its workspace path, or its socket's file name.
func (op *operator) find(ctx context.Context, thread string) (daemon.Guardian, error) {
	live, _, err := op.fleet.Discover(ctx)
	if err != nil {
		return daemon.Guardian{}, err
	}
	var hits []daemon.Guardian
	for _, g := range live {
		k, _ := g.Session()
		if thread == k.ExternalID || thread == k.Workspace || thread == filepath.Base(g.Socket) {
			hits = append(hits, g)
		}
	}
	switch len(hits) {
	case 0:
		return daemon.Guardian{}, fmt.Errorf("winx: no live session matches %q (see `winx list`)", thread)
	case 1:
		return hits[0], nil
	}
	return daemon.Guardian{}, fmt.Errorf("winx: %d sessions match %q; name one by its socket file (see `winx list`)", len(hits), thread)
}

// attach prints the session's screen and, following, the rows that appear
// later. It only reads: it never sends input or acknowledges output.
func (op *operator) attach(ctx context.Context, thread string, follow bool) error {
	fctx, cancel := context.WithTimeout(ctx, operatorTimeout)
	g, err := op.find(fctx, thread)
	cancel()
	if err != nil {
		return err
	}
	rs, err := remote.Attach(ctx, g.Socket, &remote.ClientOptions{Build: op.build})
	if err != nil {
		return err
	}
	snap := rs.Snapshot()
	k, _ := g.Session()
	state := "idle"
	if snap.Running {
		state = "running: " + snap.Command
	}
	fmt.Fprintf(op.stdout, "# %s %s (guardian pid %d, shell pid %d, cwd %s, %s)\n", k.ExternalID, k.Workspace, g.PID, snap.ShellPID, snap.Cwd, state)
	prev := screenRows(rs.Screen(ctx, 0, false))
	for _, r := range prev {
		fmt.Fprintln(op.stdout, r)
	}
	if !follow {
		return nil
	}
	t := time.NewTicker(followInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if !rs.Healthy(ctx) {
			return fmt.Errorf("winx: the session's guardian is gone")
		}
		cur := screenRows(rs.Screen(ctx, 0, false))
		for _, r := range newRows(prev, cur) {
			fmt.Fprintln(op.stdout, r)
		}
		prev = cur
	}
}

// screenRows drops the blank rows below the last written one.
func screenRows(s guardian.ScreenSnapshot) []string {
	rows := s.Rows
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	return rows
}

// newRows is what a follower prints when the screen goes from prev to cur:
// the rows after the part of prev still on screen (scrolled up by any
// amount, its last row possibly completed since). A screen that was
// cleared or redrawn shares nothing with prev and is printed whole.
func newRows(prev, cur []string) []string {
	for d := 0; d < len(prev); d++ {
		p := prev[d:]
		stable := p[:len(p)-1]
		if len(stable) > len(cur) || !slices.Equal(stable, cur[:len(stable)]) {
			continue
		}
		rest := cur[len(stable):]
		if len(rest) > 0 && rest[0] == p[len(p)-1] {
			rest = rest[1:]
		}
		return rest
	}
	return cur
}

func (op *operator) kill(ctx context.Context, thread string) error {
	var targets []daemon.Guardian
	if thread == "" {
		live, _, err := op.fleet.Discover(ctx)
		if err != nil {
			return err
		}
		targets = live
	} else {
		g, err := op.find(ctx, thread)
		if err != nil {
			return err
		}
		targets = []daemon.Guardian{g}
	}
	var errs []error
	for _, g := range targets {
		k, _ := g.Session()
		if err := op.fleet.Close(ctx, g); err != nil {
			errs = append(errs, fmt.Errorf("winx: kill %s: %w", k.ExternalID, err))
			continue
		}
		fmt.Fprintf(op.stdout, "killed %s %s (guardian pid %d)\n", k.ExternalID, k.Workspace, g.PID)
	}
	return errors.Join(errs...)
}

func (op *operator) prune(ctx context.Context, idle *time.Duration) error {
	ended, err := daemon.Prune(ctx, op.fleet, daemon.Policy{}, time.Now(), idle)
	for _, g := range ended {
		k, _ := g.Session()
		fmt.Fprintf(op.stdout, "pruned %s %s (guardian pid %d, idle since %s)\n", k.ExternalID, k.Workspace, g.PID,
			daemon.IdleSince(g.Status).Format(time.RFC3339))
	}
	if len(ended) == 0 && err == nil {
		fmt.Fprintln(op.stdout, "nothing to prune")
	}
	return err
}

// restartDaemon stops winxd (a planned stop: guardians keep running) and
// starts a new one, which finds them from their sockets.
func (op *operator) restartDaemon(ctx context.Context) error {
	c := &daemon.Client{Socket: op.paths.Daemon, Hello: op.hello}
	old, err := c.Shutdown(ctx, "winx restart-daemon")
	switch {
	case errors.Is(err, wire.ErrNoServer):
		fmt.Fprintln(op.stdout, "winxd was not running")
	case err != nil:
		return err
	default:
		if err := waitExit(ctx, old.PID, restartWait); err != nil {
			return err
		}
	}
	peer, err := daemon.Start(ctx, op.paths.Daemon, op.hello, daemon.StartOptions{
		Bin: entry.SiblingBinary(op.getenv("WINXD_BIN"), "winxd"), Env: shellEnv(os.Environ()),
	})
	if err != nil {
		return err
	}
	live, _, _ := op.fleet.Discover(ctx)
	fmt.Fprintf(op.stdout, "winxd restarted: pid %d -> %d; %d guardians kept running\n", old.PID, peer.PID, len(live))
	return nil
}

// waitExit waits until process pid is gone (or a zombie nobody reaped yet).
func waitExit(ctx context.Context, pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for pid > 0 {
		if exited(pid) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("winx: winxd (pid %d) did not exit within %v", pid, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// exited reports a process that is gone or a zombie nobody reaped yet.
func exited(pid int) bool {
	return syscall.Kill(pid, 0) != nil || zombie(pid)
}

// zombie reports a process that exited and waits to be reaped (Linux).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// doctor reports where the runtime sockets are, what answers on them and
// what does not, split-brain setups, mixed builds and winxd's last exit. It
// prints paths, pids and build identities, never environment values or
// tokens.
func (op *operator) doctor(ctx context.Context) error {
	w := op.stdout
	fmt.Fprintf(w, "winx doctor: this binary is %s\n", buildString(op.build))
	rt, err := runtimeName(op.getenv)
	if err != nil {
		fmt.Fprintf(w, "runtime: invalid WINX_RUNTIME (%v)\n", err)
	} else {
		fmt.Fprintf(w, "runtime: %s\n", rt)
	}
	for _, b := range []struct{ env, name string }{{"WINXD_BIN", "winxd"}, {"WINX_GUARDIAN_BIN", "winx-guardian"}} {
		p := entry.SiblingBinary(op.getenv(b.env), b.name)
		state := "found"
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			state = "not found next to winx (set " + b.env + " or put it on PATH)"
		}
		fmt.Fprintf(w, "binary %s: %s (%s)\n", b.name, p, state)
	}

	fmt.Fprintln(w, "socket directory candidates:")
	type dirState struct {
		dir    string
		daemon string
		live   []daemon.Guardian
	}
	var seen []dirState
	for _, c := range socketCandidates(op.getenv) {
		mark := ""
		if c.dir == op.paths.Dir {
			mark = " [used]"
		}
		fi, err := os.Lstat(c.dir)
		if err != nil {
			fmt.Fprintf(w, "  %s: %s%s: absent\n", c.source, c.dir, mark)
			continue
		}
		owner := -1
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			owner = int(st.Uid)
		}
		check := "private"
		if err := wire.CheckDir(c.dir); err != nil {
			check = "REFUSED: " + err.Error()
		}
		fmt.Fprintf(w, "  %s: %s%s: mode %04o, owner uid %d, %s\n", c.source, c.dir, mark, fi.Mode().Perm(), owner, check)
		ds := dirState{dir: c.dir, daemon: filepath.Join(c.dir, wire.DaemonSocketName)}
		if c.dir == op.paths.Dir {
			ds.daemon = op.paths.Daemon
		}
		f := &daemon.Fleet{Dir: c.dir, Hello: op.hello}
		live, bad, err := f.Discover(ctx)
		if err != nil {
			fmt.Fprintf(w, "    guardians: %v\n", err)
			continue
		}
		ds.live = live
		fmt.Fprintf(w, "    guardians: %d answering, %d not answering\n", len(live), len(bad))
		for _, g := range live {
			k, _ := g.Session()
			fmt.Fprintf(w, "      %s pid %d %s (%s)\n", k.ExternalID, g.PID, filepath.Base(g.Socket), op.buildNote(g.Build))
		}
		for _, u := range bad {
			why := "does not answer: " + u.Err
			if u.Stale {
				why = "stale (nothing listens; the guardian died)"
			}
			fmt.Fprintf(w, "      %s %s\n", filepath.Base(u.Socket), why)
		}
		c := &daemon.Client{Socket: ds.daemon, Hello: op.hello}
		switch peer, err := c.Ping(ctx); {
		case err == nil:
			fmt.Fprintf(w, "    winxd: answering on %s, pid %d (%s)\n", filepath.Base(ds.daemon), peer.PID, op.buildNote(peer.Build))
		case errors.Is(err, wire.ErrNoServer):
			if _, serr := os.Lstat(ds.daemon); serr == nil {
				fmt.Fprintf(w, "    winxd: stale socket %s\n", filepath.Base(ds.daemon))
			} else {
				fmt.Fprintln(w, "    winxd: not running")
			}
			ds.daemon = ""
		default:
			fmt.Fprintf(w, "    winxd: %v\n", err)
			ds.daemon = ""
		}
		seen = append(seen, ds)
	}

	var daemons []string
	owners := map[string][]string{}
	for _, ds := range seen {
		if ds.daemon != "" {
			daemons = append(daemons, ds.daemon)
		}
		for _, g := range ds.live {
			owners[g.Status.Key] = append(owners[g.Status.Key], ds.dir)
		}
	}
	split := false
	if len(daemons) > 1 {
		split = true
		fmt.Fprintf(w, "SPLIT-BRAIN: %d winxd answer: %s\n", len(daemons), strings.Join(daemons, ", "))
	}
	for key, dirs := range owners {
		if len(dirs) > 1 {
			split = true
			k, _ := daemon.ParseSessionKey(key)
			fmt.Fprintf(w, "SPLIT-BRAIN: session %s has guardians in %s\n", k.ExternalID, strings.Join(dirs, ", "))
		}
	}
	if !split {
		fmt.Fprintln(w, "split-brain: none")
	}

	state := daemon.StateDir(op.getenv)
	switch rec, err := daemon.ReadExitRecord(state); {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintln(w, "winxd last exit: no record")
	case err != nil:
		fmt.Fprintf(w, "winxd last exit: unreadable: %v\n", err)
	case rec.State == daemon.StateRunning && exited(rec.PID):
		fmt.Fprintf(w, "winxd last exit: pid %d started %s and is gone without recording why (killed by SIGKILL, or crashed)\n",
			rec.PID, rec.Time.Format(time.RFC3339))
	case rec.State == daemon.StateRunning:
		fmt.Fprintf(w, "winxd last exit: none, pid %d running since %s\n", rec.PID, rec.Time.Format(time.RFC3339))
	default:
		fmt.Fprintf(w, "winxd last exit: pid %d at %s: %s\n", rec.PID, rec.Time.Format(time.RFC3339), rec.Reason)
	}
	return nil
}

// buildNote is how doctor shows a peer's build next to this binary's.
func (op *operator) buildNote(b wire.Build) string {
	if b != op.build {
		return "MIXED BUILD: " + buildString(b)
	}
	return "same build"
}

// socketCandidate is a place the runtime sockets may be, by the rule that
// would choose it (wire.Resolve picks the first that applies).
type socketCandidate struct{ source, dir string }

func socketCandidates(getenv func(string) string) []socketCandidate {
	uid := fmt.Sprint(os.Getuid())
	var out []socketCandidate
	add := func(source, dir string) {
		for _, c := range out {
			if c.dir == dir {
				return
			}
		}
		out = append(out, socketCandidate{source, dir})
	}
	if s := getenv("WINX_SOCKET"); filepath.IsAbs(s) {
		add("WINX_SOCKET", filepath.Dir(filepath.Clean(s)))
	}
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		add("$XDG_RUNTIME_DIR/winx", filepath.Join(x, "winx"))
	}
	add("/run/user/<uid>/winx", filepath.Join("/run/user", uid, "winx"))
	tmp := getenv("TMPDIR")
	if !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	add("$TMPDIR/winx-<uid>", filepath.Join(tmp, "winx-"+uid))
	return out
}
