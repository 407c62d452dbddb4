// Package operator holds the operator commands of winx's durable sessions
// (winx list, jobs, attach, kill, prune, restart-daemon and doctor): they find the
// guardians and winxd from their sockets and report or end them. Only
// attach --interactive types into a shell, for the person at the terminal. It does not parse command lines or read configuration:
// the caller hands it a parsed Command and the resolved Options.
package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"winx/evidence/redact"
	"winx/guardian"
	"winx/guardian/daemon"
	"winx/guardian/remote"
	"winx/guardian/wire"
)

// Operator command limits.
const (
	operatorTimeout = 30 * time.Second       // one list, kill, prune or doctor
	followInterval  = 500 * time.Millisecond // how often attach --follow looks
)

// Names of the operator commands.
const (
	List          = "list"
	Jobs          = "jobs"
	Attach        = "attach"
	Kill          = "kill"
	Prune         = "prune"
	RestartDaemon = "restart-daemon"
	Doctor        = "doctor"
)

// IsCommand reports whether name is an operator command.
func IsCommand(name string) bool {
	switch name {
	case List, Jobs, Attach, Kill, Prune, RestartDaemon, Doctor:
		return true
	}
	return false
}

// Command is one parsed operator command line.
type Command struct {
	Name   string // one of List, Jobs, Attach, Kill, Prune, RestartDaemon, Doctor
	Thread string // jobs, attach and kill: a session's external id, workspace or socket file name; "" with All (jobs: every session)
	Follow bool   // attach --follow
	// Interactive is attach --interactive: a person types into the
	// session's shell from this terminal (interactive.go).
	Interactive bool
	All         bool           // kill --all
	Idle        *time.Duration // prune --idle-seconds; nil means the TTL tiers
}

// Options are what every operator command needs, resolved by the caller.
type Options struct {
	Paths wire.Paths // the runtime sockets in use
	Build wire.Build // this binary's build, as a hello carries it
	// FormatBuild renders a build on one line, as `winx --version` does.
	FormatBuild func(wire.Build) string
	// WinxdBin and GuardianBin are the binaries winx would start; DaemonEnv
	// is the environment restart-daemon starts winxd with.
	WinxdBin, GuardianBin string
	DaemonEnv             []string
	// Runtime is the session runtime the configuration selects, or
	// RuntimeErr why it selects none; doctor reports them.
	Runtime    string
	RuntimeErr error
	// Secret is the wire secret said in every hello; "" when none could
	// be read (winxd and the guardians then refuse every command).
	Secret string
	// Getenv reads the variables that decide the socket directory
	// candidates and the state directory (doctor).
	Getenv func(string) string
	// Config is doctor's configuration section, already redacted by the
	// caller: the effective settings and their sources.
	Config []Setting
	Stdout io.Writer
	// Stdin is the terminal attach --interactive reads keys from; nil
	// when stdin is no file.
	Stdin *os.File
	// NoRedact (WINX_NO_REDACT=1) prints screens and commands raw; by
	// default what attach prints and list's last command are redacted: a
	// terminal log is no place for a token.
	NoRedact bool
}

// redact returns s with its secrets replaced (unless NoRedact).
func (op *operator) redact(s string) string {
	out, _ := redact.New(op.NoRedact).String(s)
	return out
}

// Setting is one configuration variable as doctor shows it.
type Setting struct {
	Name   string
	Value  string // redacted by whoever builds it
	Source string // "environment" or "default"
	// Warning says why a set value is outside its documented range; ""
	// when it is within it.
	Warning string
}

// operator is what every operator command needs.
type operator struct {
	Options
	hello wire.Hello
	fleet *daemon.Fleet
}

// Run runs c. Attach with Follow runs until ctx ends; every other command
// has 30 seconds.
func Run(ctx context.Context, c Command, o Options) error {
	op := &operator{Options: o, hello: wire.NewHello(wire.RoleAdapter, o.Build, nil).WithSecret(o.Secret)}
	op.fleet = &daemon.Fleet{Dir: o.Paths.Dir, Hello: op.hello}
	if c.Name == Attach && c.Interactive {
		return op.attachInteractive(ctx, c.Thread)
	}
	if c.Name == Attach && c.Follow {
		return op.attach(ctx, c.Thread, true)
	}
	ctx, cancel := context.WithTimeout(ctx, operatorTimeout)
	defer cancel()
	switch c.Name {
	case List:
		return op.list(ctx)
	case Jobs:
		return op.jobs(ctx, c.Thread)
	case Attach:
		return op.attach(ctx, c.Thread, false)
	case Kill:
		thread := ""
		if !c.All {
			thread = c.Thread
		}
		return op.kill(ctx, thread)
	case Prune:
		return op.prune(ctx, c.Idle)
	case RestartDaemon:
		return op.restartDaemon(ctx)
	case Doctor:
		return op.doctor(ctx)
	}
	panic("operator: unknown command " + c.Name)
}

// ListEntry is one session in `winx list`.
type ListEntry struct {
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
	// Unresponsive: the guardian accepts connections but did not answer
	// within the probe timeout (stopped, hung or starting); only what its
	// record names is known then.
	Unresponsive bool `json:"unresponsive,omitempty"`
}

func (op *operator) entry(g daemon.Guardian) ListEntry {
	k, _ := g.Session()
	cmd := op.redact(g.Status.Command)
	return ListEntry{
		Thread: k.ExternalID, Workspace: k.Workspace, Principal: k.Principal, Scope: k.Scope,
		PID: g.PID, ShellPID: g.Status.ShellPID, Cwd: g.Status.Cwd,
		Created: g.Status.Created, LastActivity: g.Status.LastActivity, LastCommandAt: g.Status.LastCommand,
		LastCommand: cmd, EverRanCommand: g.Status.EverRanCommand, Running: g.Status.Running,
		BackgroundCount: g.Status.BackgroundRunning, Build: op.FormatBuild(g.Build), SameBuild: g.Build == op.Build,
		Socket: g.Socket,
	}
}

func (op *operator) list(ctx context.Context) error {
	live, bad, err := op.fleet.Discover(ctx)
	if err != nil {
		return err
	}
	out := struct {
		SocketDir   string               `json:"socket_dir"`
		Sessions    []ListEntry          `json:"sessions"`
		Unreachable []daemon.Unreachable `json:"unreachable,omitempty"`
	}{SocketDir: op.Paths.Dir, Sessions: []ListEntry{}, Unreachable: bad}
	for _, g := range live {
		out.Sessions = append(out.Sessions, op.entry(g))
	}
	for _, u := range bad {
		if u.Stale || u.Key == "" {
			continue
		}
		k, _ := daemon.ParseSessionKey(u.Key)
		out.Sessions = append(out.Sessions, ListEntry{
			Thread: k.ExternalID, Workspace: k.Workspace, Principal: k.Principal, Scope: k.Scope,
			PID: u.PID, Socket: u.Socket, Unresponsive: true,
		})
	}
	enc := json.NewEncoder(op.Stdout)
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
	rs, err := remote.Attach(ctx, g.Socket, &remote.ClientOptions{Build: op.Build, Secret: op.Secret})
	if err != nil {
		return err
	}
	snap := rs.Snapshot()
	k, _ := g.Session()
	state := "idle"
	if snap.Running {
		state = "running: " + snap.Command
	}
	fmt.Fprint(op.Stdout, op.redact(fmt.Sprintf("# %s %s (guardian pid %d, shell pid %d, cwd %s, %s)\n", k.ExternalID, k.Workspace, g.PID, snap.ShellPID, snap.Cwd, state)))
	prev := screenRows(rs.Screen(ctx, 0, false))
	op.printRows(prev)
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
		op.printRows(newRows(prev, cur))
		prev = cur
	}
}

// printRows prints screen rows redacted as one text, so a secret the
// terminal wrapped over two rows is still found whole when the rows join.
func (op *operator) printRows(rows []string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(op.Stdout, op.redact(strings.Join(rows, "\n")))
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
	var (
		targets []daemon.Guardian
		stale   []daemon.Unreachable
	)
	if thread == "" {
		live, bad, err := op.fleet.Discover(ctx)
		if err != nil {
			return err
		}
		targets, stale = live, bad
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
		fmt.Fprintf(op.Stdout, "killed %s %s (guardian pid %d)\n", k.ExternalID, k.Workspace, g.PID)
	}
	// A guardian that is alive but does not let this process in (a state
	// directory with another wire secret: sudo, a unit with its own
	// XDG_STATE_HOME) keeps running: say so, or the operator believes
	// every session is gone.
	for _, u := range stale {
		if u.Stale {
			continue
		}
		errs = append(errs, fmt.Errorf("winx: kill: the guardian on %s (pid %d) keeps running: %s", u.Socket, u.PID, u.Err))
	}
	errs = append(errs, op.cleanupStale(ctx, stale))
	return errors.Join(errs...)
}

// cleanupStale removes what the dead guardians among bad left: their
// descendants, shell directories, records and sockets.
func (op *operator) cleanupStale(ctx context.Context, bad []daemon.Unreachable) error {
	done, err := op.fleet.CleanupStale(ctx, bad)
	for _, s := range done {
		fmt.Fprintf(op.Stdout, "removed the stale socket %s of a dead guardian\n", filepath.Base(s))
	}
	return err
}

func (op *operator) prune(ctx context.Context, idle *time.Duration) error {
	_, bad, err := op.fleet.Discover(ctx)
	if err != nil {
		return err
	}
	if err := op.cleanupStale(ctx, bad); err != nil {
		return err
	}
	expired, err := op.fleet.ExpireLost(time.Now())
	for _, s := range expired {
		fmt.Fprintf(op.Stdout, "removed the expired lost-session record of %s and its journals\n", filepath.Base(s))
	}
	if err != nil {
		return err
	}
	if err := op.pruneJobRecords(); err != nil {
		return err
	}
	ended, err := daemon.Prune(ctx, op.fleet, daemon.Policy{}, time.Now(), idle)
	for _, g := range ended {
		k, _ := g.Session()
		fmt.Fprintf(op.Stdout, "pruned %s %s (guardian pid %d, idle since %s)\n", k.ExternalID, k.Workspace, g.PID,
			daemon.IdleSince(g.Status).Format(time.RFC3339))
	}
	if len(ended) == 0 && err == nil {
		fmt.Fprintln(op.Stdout, "nothing to prune")
	}
	return err
}

// restartDaemon stops winxd (a planned stop: guardians keep running) and
// starts a new one, which finds them from their sockets.
func (op *operator) restartDaemon(ctx context.Context) error {
	r, err := daemon.Restart(ctx, op.Paths.Daemon, op.hello, daemon.StartOptions{Bin: op.WinxdBin, Env: op.DaemonEnv}, "winx restart-daemon")
	if err != nil {
		return err
	}
	if r.Old.PID == 0 {
		fmt.Fprintln(op.Stdout, "winxd was not running")
	}
	live, _, _ := op.fleet.Discover(ctx)
	fmt.Fprintf(op.Stdout, "winxd restarted: pid %d -> %d (%s); %d guardians kept running\n", r.Old.PID, r.New.PID, op.FormatBuild(r.New.Build), len(live))
	return nil
}

// Exited reports a process that is gone or a zombie nobody reaped yet.
func Exited(pid int) bool { return daemon.Exited(pid) }

// doctor reports where the runtime sockets are, what answers on them and
// what does not, split-brain setups, mixed builds and winxd's last exit. It
// prints paths, pids and build identities, never environment values or
// tokens.
func (op *operator) doctor(ctx context.Context) error {
	w := op.Stdout
	fmt.Fprintf(w, "winx doctor: this binary is %s\n", op.FormatBuild(op.Build))
	if op.RuntimeErr != nil {
		fmt.Fprintf(w, "runtime: invalid WINX_RUNTIME (%v)\n", op.RuntimeErr)
	} else {
		fmt.Fprintf(w, "runtime: %s\n", op.Runtime)
	}
	if len(op.Config) > 0 {
		fmt.Fprintln(w, "configuration (secrets redacted):")
		for _, s := range op.Config {
			fmt.Fprintf(w, "  %s=%s (%s)\n", s.Name, s.Value, s.Source)
			if s.Warning != "" {
				fmt.Fprintf(w, "    warning: %s\n", s.Warning)
			}
		}
	}
	for _, b := range []struct{ env, name, path string }{{"WINXD_BIN", "winxd", op.WinxdBin}, {"WINX_GUARDIAN_BIN", "winx-guardian", op.GuardianBin}} {
		p := b.path
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
	for _, c := range socketCandidates(op.Getenv) {
		mark := ""
		if c.dir == op.Paths.Dir {
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
		if c.dir == op.Paths.Dir {
			ds.daemon = op.Paths.Daemon
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

	state := daemon.StateDir(op.Getenv)
	switch rec, err := daemon.ReadExitRecord(state); {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintln(w, "winxd last exit: no record")
	case err != nil:
		fmt.Fprintf(w, "winxd last exit: unreadable: %v\n", err)
	case rec.State == daemon.StateRunning && Exited(rec.PID):
		fmt.Fprintf(w, "winxd last exit: pid %d started %s and is gone without recording why (killed by SIGKILL, or crashed)\n",
			rec.PID, rec.Time.Format(time.RFC3339))
	case rec.State == daemon.StateRunning:
		fmt.Fprintf(w, "winxd last exit: none, pid %d running since %s\n", rec.PID, rec.Time.Format(time.RFC3339))
	default:
		fmt.Fprintf(w, "winxd last exit: pid %d at %s: %s\n", rec.PID, rec.Time.Format(time.RFC3339), rec.Reason)
	}
	return nil
}

// buildNote is how doctor shows a peer's build next to this binary's: the
// build is always named, so a report shows which build each process runs.
func (op *operator) buildNote(b wire.Build) string {
	if b != op.Build {
		return "MIXED BUILD: " + op.FormatBuild(b)
	}
	return "same build: " + op.FormatBuild(b)
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
	// /run/user/<uid> is the one candidate no variable moves; it is looked
	// at only when XDG_RUNTIME_DIR does not name the runtime directory (as
	// wire.Resolve does), so an environment that names its own (a test's,
	// a container's) never reports the login session's winxd.
	if x := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		add("$XDG_RUNTIME_DIR/winx", filepath.Join(x, "winx"))
	} else {
		add("/run/user/<uid>/winx", filepath.Join("/run/user", uid, "winx"))
	}
	tmp := getenv("TMPDIR")
	if !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	add("$TMPDIR/winx-<uid>", filepath.Join(tmp, "winx-"+uid))
	return out
}
