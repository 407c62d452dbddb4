package operator

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/guardian/daemon"
	"winx/guardian/wire"
)

// innerEnv marks the go test run by TestSuiteLeavesUserRuntimeAlone, so it
// does not run itself again.
const innerEnv = "WINX_HERMETIC_INNER"

// snapshotTree lists every file under root with its mode, size and
// content hash (sockets by name and mode only).
func snapshotTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), fi.Mode())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The test suite is hermetic: on a machine where the user runs winx (a
// winxd answering in the default socket directory with a live session, a
// state directory in use), the packages that start winx, winxd and
// guardians pass and leave all of it as it was. The "user" here is a
// private HOME and TMPDIR, which the packages run in a child go test see
// as the defaults.
func TestSuiteLeavesUserRuntimeAlone(t *testing.T) {
	if os.Getenv(innerEnv) != "" {
		t.Skip("inside the hermetic run")
	}
	if testing.Short() {
		t.Skip("runs go test in a child")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	user, err := os.MkdirTemp("/tmp", "wxu") // short: sockaddr_un
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(user) })
	bins, home, tmp := filepath.Join(user, "bin"), filepath.Join(user, "home"), filepath.Join(user, "tmp")
	for _, d := range []string{bins, home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(gobin, "build", "-o", bins+"/", "winx/cmd/winxd", "winx/cmd/winx-guardian").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "HOME=" + home, "TMPDIR=" + tmp,
		"GOCACHE=" + os.Getenv("GOCACHE"), "GOMODCACHE=" + os.Getenv("GOMODCACHE"), "GOPATH=" + os.Getenv("GOPATH"),
		"GOFLAGS=" + os.Getenv("GOFLAGS"), "GOTOOLCHAIN=local"}
	if fi, err := os.Stat(filepath.Join("/run/user", fmt.Sprint(os.Getuid()))); err == nil && fi.IsDir() {
		// That directory would be the default, and no variable moves it:
		// the user's runtime directory is named instead.
		run := filepath.Join(user, "run")
		os.Mkdir(run, 0o700)
		env = append(env, "XDG_RUNTIME_DIR="+run)
	}
	getenv := func(k string) string {
		v := ""
		for _, kv := range env {
			if name, val, ok := strings.Cut(kv, "="); ok && name == k {
				v = val
			}
		}
		return v
	}
	paths, err := wire.Resolve(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(paths.Dir, user) {
		t.Fatalf("the user's default socket directory %s is outside %s", paths.Dir, user)
	}
	if err := wire.EnsureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	secretPath, err := wire.SecretPath(getenv)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := wire.EnsureSecret(secretPath)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Dir(secretPath)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	hello := wire.NewHello(wire.RoleAdapter, wire.Build{}, nil).WithSecret(secret)
	peer, err := daemon.Start(ctx, paths.Daemon, hello, daemon.StartOptions{
		Bin: filepath.Join(bins, "winxd"), Env: append(slices.Clone(env), "WINX_GUARDIAN_BIN="+filepath.Join(bins, "winx-guardian")),
	})
	if err != nil {
		t.Fatal(err)
	}
	fleet := &daemon.Fleet{Dir: paths.Dir, Hello: hello}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		live, _, _ := fleet.Discover(ctx)
		for _, g := range live {
			fleet.Close(ctx, g)
		}
		if p, err := os.FindProcess(peer.PID); err == nil {
			p.Kill()
		}
	})
	work := filepath.Join(home, "project")
	os.Mkdir(work, 0o700)
	c := &daemon.Client{Socket: paths.Daemon, Hello: hello}
	key := daemon.SessionKey{ExternalID: "ws_user", Workspace: work}.String()
	res, err := c.Ensure(ctx, &daemon.EnsureParams{Key: key, Dir: work, Workspace: work, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	beforeSock, beforeState := snapshotTree(t, paths.Dir), snapshotTree(t, state)

	cmd := exec.CommandContext(ctx, gobin, "test", "-count=1",
		"-run", "TestDaemonOperatorCommands|TestServeEnsureDiscoverShutdown|TestDaemonShells$|TestSuiteLeavesUserRuntimeAlone",
		"winx/cmd/winx", "winx/guardian/daemon", "winx/guardian/daemon/operator", "winx/guardian/runtime")
	cmd.Env = append(slices.Clone(env), innerEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test with a winx of the user's running: %v\n%s", err, out)
	}
	t.Logf("%s", out)

	if after := snapshotTree(t, paths.Dir); !slices.Equal(after, beforeSock) {
		t.Errorf("the user's socket directory changed:\nbefore %q\nafter  %q", beforeSock, after)
	}
	if after := snapshotTree(t, state); !slices.Equal(after, beforeState) {
		t.Errorf("the user's state directory changed:\nbefore %q\nafter  %q", beforeState, after)
	}
	if p, err := c.Ping(ctx); err != nil || p.PID != peer.PID {
		t.Errorf("the user's winxd: %+v, %v; want pid %d answering", p, err, peer.PID)
	}
	if g, err := fleet.Probe(ctx, res.Guardian.Socket); err != nil || g.PID != res.Guardian.PID || g.Status.Closed {
		t.Errorf("the user's session: %+v, %v; want guardian %d live", g, err, res.Guardian.PID)
	}
}
