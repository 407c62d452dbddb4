//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"winx/pty/testenv"
)

// launcherEnv makes the test binary act as the launcher, as the winx binary
// does when its first argument is LauncherArg.
const launcherEnv = "WINX_SANDBOX_TEST_LAUNCHER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2:]))
	}
	if os.Getenv(launcherEnv) == "1" {
		if len(os.Args) < 2 || os.Args[1] != LauncherArg {
			fmt.Fprintln(os.Stderr, "launcher: want", LauncherArg, "first")
			os.Exit(2)
		}
		err := RunLauncher(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	os.Exit(m.Run())
}

func TestHandledRights(t *testing.T) {
	tests := []struct {
		abi     int
		has     uint64
		hasNot  uint64
		comment string
	}{
		{1, abi1Rights, unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE, "first ABI"},
		{2, unix.LANDLOCK_ACCESS_FS_REFER, unix.LANDLOCK_ACCESS_FS_TRUNCATE, "refer"},
		{4, unix.LANDLOCK_ACCESS_FS_TRUNCATE, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, "network only"},
		{7, unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX, "ioctl"},
		{9, unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX, 0, "unix sockets"},
	}
	for _, tc := range tests {
		h := handledRights(tc.abi)
		if h&tc.has != tc.has || h&tc.hasNot != 0 {
			t.Errorf("handledRights(%d) = %#x, want %#x set and %#x clear (%s)", tc.abi, h, tc.has, tc.hasNot, tc.comment)
		}
	}
}

// rulesByPath merges rules into the access each path is granted.
func rulesByPath(rules []rule) map[string]uint64 {
	got := map[string]uint64{}
	for _, r := range rules {
		got[r.path] |= r.access
	}
	return got
}

// testTree is a made-up file system for the rule tests.
var testTree = fakeTree{
	"/":     {"dev", "etc", "home", "tmp"},
	"/home": {"alice", "bob"},
	"/dev":  {"disk", "mqueue", "pts", "shm"},
}

func TestPolicyRules(t *testing.T) {
	p := Policy{
		Home:   "/home/alice",
		Hidden: []string{"/tmp", "/dev/shm"},
		RW:     []string{"/home/alice/ws", "/tmp/session"},
		RO:     []string{"/home/alice/.gitconfig"},
	}
	got := rulesByPath(policyRules(p, []string{"/dev/pts/3"}, testTree.list))
	for path, want := range map[string]uint64{
		"/etc":                   readRights,
		"/home/bob":              readRights,
		"/tmp/session":           allRights,
		"/home/alice/ws":         allRights,
		"/home/alice/.gitconfig": readRights,
		"/dev/disk":              unix.LANDLOCK_ACCESS_FS_READ_DIR,
		"/dev/null":              deviceRights,
		"/dev/tty":               deviceRights,
		"/dev/pts/3":             deviceRights,
	} {
		if got[path] != want {
			t.Errorf("rules for %s = %#x, want %#x", path, got[path], want)
		}
	}
	// The home directory, the shared temporary directories, the other
	// terminals and what would reach them.
	for _, hidden := range []string{"/", "/home", "/home/alice", "/tmp", "/dev", "/dev/pts", "/dev/pts/4", "/dev/shm", "/dev/ptmx"} {
		if _, ok := got[hidden]; ok {
			t.Errorf("policyRules grants %s", hidden)
		}
	}
	// No terminal: no /dev/pts entry at all.
	for path := range rulesByPath(policyRules(p, nil, testTree.list)) {
		if strings.HasPrefix(path, "/dev/pts") {
			t.Errorf("policyRules without a terminal grants %s", path)
		}
	}
}

func TestRulesetScope(t *testing.T) {
	scopes := uint64(unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
	tcp := uint64(unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP)
	tests := []struct {
		name        string
		r           ruleset
		net, scoped uint64
	}{
		{"policy ABI 3", policyRuleset(3, Policy{DenyNetwork: true}, nil, testTree.list), 0, 0},
		{"policy ABI 5", policyRuleset(5, Policy{}, nil, testTree.list), 0, 0},
		{"policy ABI 5 deny", policyRuleset(5, Policy{DenyNetwork: true}, nil, testTree.list), tcp, 0},
		{"policy ABI 7", policyRuleset(7, Policy{}, nil, testTree.list), 0, scopes},
		{"policy ABI 7 deny", policyRuleset(7, Policy{DenyNetwork: true}, nil, testTree.list), tcp, scopes},
		{"read-only ABI 4", readOnlyRuleset(4, nil, ReadOnlyOptions{}, testTree.list), tcp, 0},
		{"read-only ABI 7", readOnlyRuleset(7, nil, ReadOnlyOptions{}, testTree.list), tcp, scopes},
	}
	for _, tc := range tests {
		if tc.r.attr.Handled_access_net != tc.net || tc.r.attr.Scoped != tc.scoped {
			t.Errorf("%s: net %#x, scoped %#x; want %#x, %#x", tc.name, tc.r.attr.Handled_access_net, tc.r.attr.Scoped, tc.net, tc.scoped)
		}
		// The size passed covers every field in use.
		want := unsafe.Offsetof(tc.r.attr.Handled_access_fs) + unsafe.Sizeof(tc.r.attr.Handled_access_fs)
		if tc.scoped != 0 {
			want = unsafe.Offsetof(tc.r.attr.Scoped) + unsafe.Sizeof(tc.r.attr.Scoped)
		} else if tc.net != 0 {
			want = unsafe.Offsetof(tc.r.attr.Handled_access_net) + unsafe.Sizeof(tc.r.attr.Handled_access_net)
		}
		if tc.r.size != want {
			t.Errorf("%s: size %d, want %d", tc.name, tc.r.size, want)
		}
	}
}

func TestReadOnlyRuleset(t *testing.T) {
	terminals := []string{"/dev/pts/3"}
	plain := readOnlyRuleset(7, terminals, ReadOnlyOptions{}, testTree.list)
	if want := handledRights(7) & writeRights; plain.attr.Handled_access_fs != want {
		t.Errorf("read-only handled %#x, want %#x (writes only)", plain.attr.Handled_access_fs, want)
	}
	got := rulesByPath(plain.rules)
	want := map[string]uint64{"/dev/null": terminalRights, "/dev/tty": terminalRights, "/dev/pts/3": terminalRights}
	if len(got) != len(want) {
		t.Errorf("read-only rules = %v, want %v", got, want)
	}
	for path, access := range want {
		if got[path] != access {
			t.Errorf("read-only rule for %s = %#x, want %#x", path, got[path], access)
		}
	}

	hide := readOnlyRuleset(9, terminals, ReadOnlyOptions{Hide: []string{"/home/alice"}, Readable: []string{"/home/alice/pub"}}, testTree.list)
	if want := handledRights(9) & (writeRights | hideRights); hide.attr.Handled_access_fs != want {
		t.Errorf("read-only hiding handled %#x, want %#x", hide.attr.Handled_access_fs, want)
	}
	got = rulesByPath(hide.rules)
	for path, access := range map[string]uint64{
		"/etc":            readRights,
		"/home/bob":       readRights,
		"/tmp":            readRights,
		"/home/alice/pub": readRights,
		"/dev/disk":       unix.LANDLOCK_ACCESS_FS_READ_DIR,
		"/dev/null":       terminalRights | unix.LANDLOCK_ACCESS_FS_READ_FILE,
		"/dev/urandom":    unix.LANDLOCK_ACCESS_FS_READ_FILE,
		"/dev/pts/3":      terminalRights | unix.LANDLOCK_ACCESS_FS_READ_FILE,
	} {
		if got[path] != access {
			t.Errorf("read-only hiding: rule for %s = %#x, want %#x", path, got[path], access)
		}
	}
	for _, hidden := range []string{"/", "/home", "/home/alice", "/dev", "/dev/pts", "/dev/shm"} {
		if _, ok := got[hidden]; ok {
			t.Errorf("read-only hiding grants %s", hidden)
		}
	}
}

func TestProbeReason(t *testing.T) {
	tests := []struct {
		errno unix.Errno
		want  string
	}{
		{unix.ENOSYS, "CONFIG_SECURITY_LANDLOCK"},
		{unix.EOPNOTSUPP, "lsm="},
		{unix.EPERM, "seccomp"},
		{unix.EINVAL, unix.EINVAL.Error()},
	}
	for _, tc := range tests {
		if got := probeReason(tc.errno); !strings.Contains(got, tc.want) {
			t.Errorf("probeReason(%v) = %q, want it to mention %q", tc.errno, got, tc.want)
		}
	}
}

func TestRunLauncherRefusesBeforeRestricting(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want error
	}{
		{"no command", []string{"--home", "/h", "--"}, nil},
		{"relative path", []string{"--rw", "rel", "--", "/bin/true"}, ErrInvalidPolicy},
		{"unknown flag", []string{"--bogus", "--", "/bin/true"}, nil},
	}
	for _, tc := range tests {
		err := RunLauncher(tc.args)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: RunLauncher(%q) = %v, want an error (%v)", tc.name, tc.args, err, tc.want)
		}
	}
}

// confinedBash runs script in bash -c through the launcher under p, with
// HOME and WS set, and returns its combined output and error.
func confinedBash(t *testing.T, p Policy, ws, script string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Missing(t, "no bash: %v", err)
	}
	argv := Launcher(os.Args[0], p, []string{bash, "-c", script})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), launcherEnv+"=1", "HOME="+p.Home, "WS="+ws, "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// shellCase is a script run confined and what it must give.
type shellCase struct {
	name   string
	script string
	ok     bool   // exit status 0
	output string // a substring of the output
}

// TestLandlockConfinesShell starts real bash through the launcher with a
// home directory outside /tmp and checks what it may and may not do.
func TestLandlockConfinesShell(t *testing.T) {
	abi := requireLandlock(t)
	t.Logf("Landlock ABI %d", abi)
	// The home directory must not be under /tmp, which is writable.
	home, err := os.MkdirTemp("/var/tmp", "winx-sandbox-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp for a home directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := filepath.Join(home, "ws")
	roDir := filepath.Join(home, "ro")
	for _, d := range []string{ws, roDir, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(home, ".ssh", "config")
	if err := os.WriteFile(secret, []byte("Host secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(roDir, "notes"), []byte("ro-ok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := PolicyFromEnv(ws, envFunc(map[string]string{"HOME": home, EnvROPaths: roDir}))
	if err != nil {
		t.Fatal(err)
	}
	// An unconfined process working in the home directory: its /proc/PID/cwd
	// link must not lead a confined shell in.
	sleeper := exec.Command("sleep", "60")
	sleeper.Dir = home
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	bystander := sleeper.Process.Pid
	tmpFile := filepath.Join(realTempDir(t), "from-sandbox")
	sibling := filepath.Join(filepath.Dir(home), filepath.Base(home)+"-sibling")
	t.Cleanup(func() { os.Remove(sibling) })

	tests := []shellCase{
		{"write in home", `echo x > "$HOME/f"`, false, "Permission denied"},
		{"write in the workspace", `echo x > "$WS/f" && cat "$WS/f"`, true, "x"},
		{"read ~/.ssh/config", `cat "$HOME/.ssh/config"`, false, "Permission denied"},
		{"list home", `ls "$HOME"`, false, "Permission denied"},
		{"truncate in home", `truncate -s 0 "$HOME/.ssh/config"`, false, "Permission denied"},
		{"remove in home", `rm -f "$HOME/.ssh/config"`, false, "Permission denied"},
		{"grandchild writes in home", `bash -c 'echo x > "$HOME/g"'`, false, "Permission denied"},
		{"read outside home", `head -c 4 /etc/passwd >/dev/null && echo read-ok`, true, "read-ok"},
		{"read-only path inside home", `cat "$HOME/ro/notes"`, true, "ro-ok"},
		{"write a read-only path", `echo x > "$HOME/ro/notes"`, false, "Permission denied"},
		{"write in /tmp", `echo x > ` + tmpFile, false, "Permission denied"},
		{"write next to home", `echo x > ` + sibling, false, "Permission denied"},
		{"read through /proc/self/root", `cat /proc/self/root"$HOME/.ssh/config"`, false, "Permission denied"},
		{"read through /proc/self/cwd", `cd "$HOME" && cat /proc/self/cwd/.ssh/config`, false, "Permission denied"},
		{"read through another process's cwd", `cat /proc/` + strconv.Itoa(bystander) + `/cwd/.ssh/config`, false, "Permission denied"},
		// Set by the launcher before restricting itself: a setuid program
		// started by the shell gains nothing (and, as root, Landlock would
		// not demand it, so only this case notices it missing).
		{"no_new_privs", `grep NoNewPrivs /proc/self/status`, true, "NoNewPrivs:\t1"},
		{"devices", `echo x > /dev/null && head -c 1 /dev/urandom >/dev/null && echo dev-ok`, true, "dev-ok"},
	}
	// A block device this process can read (a disk, as root) would give the
	// home directory away; inside the sandbox it must not open.
	if disk := readableBlockDevice(); disk != "" {
		tests = append(tests, shellCase{"raw disk " + disk, `head -c 1 ` + disk + ` >/dev/null`, false, "Permission denied"})
	} else {
		t.Log("no readable block device: raw disk access not checked")
	}
	for _, tc := range tests {
		out, err := confinedBash(t, p, ws, tc.script)
		if (err == nil) != tc.ok || !strings.Contains(out, tc.output) {
			t.Errorf("%s: %s\n= %v, output %q; want ok=%v and output containing %q", tc.name, tc.script, err, out, tc.ok, tc.output)
		}
		if strings.Contains(out, "Host secret") {
			t.Errorf("%s: the secret leaked: %q", tc.name, out)
		}
	}
	// Nothing happened behind the shell's back.
	if b, err := os.ReadFile(secret); err != nil || string(b) != "Host secret\n" {
		t.Errorf("%s after the sandboxed shells = %q, %v; want it untouched", secret, b, err)
	}
	for _, f := range []string{filepath.Join(home, "f"), filepath.Join(home, "g"), sibling} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was created from inside the sandbox", f)
		}
	}
	if names, _ := os.ReadDir(ws); !slices.ContainsFunc(names, func(e os.DirEntry) bool { return e.Name() == "f" }) {
		t.Errorf("the workspace write left no file")
	}
}

// readableBlockDevice returns a block device under /dev that this process
// can open for reading, or "".
func readableBlockDevice() string {
	entries, _ := os.ReadDir("/dev")
	for _, e := range entries {
		if e.Type()&os.ModeDevice == 0 || e.Type()&os.ModeCharDevice != 0 {
			continue
		}
		path := filepath.Join("/dev", e.Name())
		if f, err := os.Open(path); err == nil {
			f.Close()
			return path
		}
	}
	return ""
}

func TestLandlockMissingGrantIsSkipped(t *testing.T) {
	requireLandlock(t)
	home, err := os.MkdirTemp("/var/tmp", "winx-sandbox-home-")
	if err != nil {
		testenv.Missing(t, "no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	p := Policy{Home: home, RW: []string{filepath.Join(home, "gone")}, RO: []string{filepath.Join(home, "gone-too")}}
	out, err := confinedBash(t, p, home, `echo started`)
	if err != nil || !strings.Contains(out, "started") {
		t.Errorf("launcher with missing paths = %v, %q; want the shell to start", err, out)
	}
}
