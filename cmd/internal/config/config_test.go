package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"winx/guardian/daemon/operator"
	"winx/guardian/remote"
	"winx/guardian/wire"
	"winx/mcp/usage"
)

func TestParseBool(t *testing.T) {
	tests := []struct {
		value   string
		want    bool
		wantErr bool
	}{
		{"", false, false},
		{"1", true, false},
		{"true", true, false},
		{"TRUE", true, false},
		{"True", true, false},
		{"yes", true, false},
		{"Yes", true, false},
		{"on", true, false},
		{"ON", true, false},
		{"0", false, false},
		{"false", false, false},
		{"FALSE", false, false},
		{"no", false, false},
		{"off", false, false},
		{"Off", false, false},
		{"maybe", false, true},
		{"2", false, true},
		{" 1", false, true},
		{"y", false, true},
		{"enabled", false, true},
	}
	for _, tt := range tests {
		got, err := ParseBool("WINX_X", tt.value)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseBool(WINX_X, %q) = %v, %v; want %v (error %v)", tt.value, got, err, tt.want, tt.wantErr)
		}
		if err == nil {
			continue
		}
		var ve *VarError
		if !errors.As(err, &ve) || ve.Name != "WINX_X" || ve.Value != tt.value || !errors.Is(err, ErrNotBool) {
			t.Errorf("ParseBool(WINX_X, %q) error = %#v, want a *VarError naming WINX_X wrapping ErrNotBool", tt.value, err)
		}
		if !strings.Contains(err.Error(), "WINX_X") {
			t.Errorf("ParseBool(WINX_X, %q) error %q does not name the variable", tt.value, err)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		value   string
		min     int
		want    int
		set     bool
		wantErr bool
	}{
		{"", 0, 0, false, false},
		{"0", 0, 0, true, false},
		{"12", 1, 12, true, false},
		{"0", 1, 0, false, true},
		{"-1", 0, 0, false, true},
		{"x", 0, 0, false, true},
		{"1.5", 0, 0, false, true},
	}
	for _, tt := range tests {
		n, set, err := ParseInt("WINX_N", tt.value, tt.min)
		if n != tt.want || set != tt.set || (err != nil) != tt.wantErr {
			t.Errorf("ParseInt(WINX_N, %q, %d) = %d, %v, %v; want %d, %v (error %v)", tt.value, tt.min, n, set, err, tt.want, tt.set, tt.wantErr)
		}
		var ve *VarError
		if err != nil && (!errors.As(err, &ve) || ve.Name != "WINX_N") {
			t.Errorf("ParseInt(WINX_N, %q) error = %v, want a *VarError naming WINX_N", tt.value, err)
		}
	}
}

func TestRuntimeName(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    string
		wantErr bool
	}{
		{map[string]string{}, RuntimeDaemon, false},
		{map[string]string{"WINX_RUNTIME": "daemon"}, RuntimeDaemon, false},
		{map[string]string{"WINX_RUNTIME": "embedded"}, RuntimeEmbedded, false},
		{map[string]string{"WINX_EMBEDDED": "1"}, RuntimeEmbedded, false},
		{map[string]string{"WINX_EMBEDDED": "0"}, RuntimeDaemon, false},
		{map[string]string{"WINX_RUNTIME": "threads"}, "", true},
		{map[string]string{"WINX_EMBEDDED": "true"}, RuntimeEmbedded, false},
		{map[string]string{"WINX_RUNTIME": "daemon", "WINX_EMBEDDED": "1"}, RuntimeDaemon, false},
	}
	for _, tt := range tests {
		embedded, err := ParseBool("WINX_EMBEDDED", tt.env["WINX_EMBEDDED"])
		if err != nil {
			t.Fatal(err)
		}
		got, err := runtimeName(tt.env["WINX_RUNTIME"], embedded)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("runtimeName(%v) = %q, %v; want %q (error %v)", tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestShellEnvDropsCredentials(t *testing.T) {
	got := shellEnv([]string{"PATH=/bin", "WINX_HTTP_TOKEN=secret-value", "HOME=/h", "WINX_HTTP_TOKENX=kept"}, nil, nil)
	want := []string{"PATH=/bin", "HOME=/h", "WINX_HTTP_TOKENX=kept"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shellEnv = %q, want %q", got, want)
	}
}

// TestShellEnvDropsEverySource: the principals' token_env variables, any
// variable holding a credential's value under another name, and --token's
// value are dropped; a short weak token drops nothing by value.
func TestShellEnvDropsEverySource(t *testing.T) {
	const tok = "principal-token-0123456789abcdefghijklmno"
	const flagTok = "flag-token-0123456789abcdefghijklmnopqrstu"
	environ := []string{"PATH=/bin", "CI_TOKEN=" + tok, "COPY=" + tok, "FLAGCOPY=" + flagTok, "SHLVL=1", "WEAK=1", "HOME=/h"}
	got := shellEnv(environ, []string{"CI_TOKEN", "WEAK"}, []string{flagTok, "1"})
	want := []string{"PATH=/bin", "SHLVL=1", "HOME=/h"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shellEnv = %q, want %q", got, want)
	}
}

// TestServeProtectsCredentialFiles: the principal config, its token files
// and the state directory are on the file tools' deny list, and its
// token_env variables are not in the shells' environment.
func TestServeProtectsCredentialFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := dir + "/p.toml"
	body := "[[principals]]\nname = \"a\"\ntoken_env = \"A_TOKEN\"\n\n[[principals]]\nname = \"b\"\ntoken_file = \"b.tok\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"A_TOKEN=a-token-0123456789abcdefghijklmnopqrstuvw", "XDG_STATE_HOME=/var/st", "PATH=/bin"}
	a, err := LoadAdapter([]string{"--http", "--principal-config", cfg}, environ, testCatalog, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/proc/self", cfg, "/var/st/winx", dir + "/b.tok"}
	if strings.Join(a.Serve.Protect, ",") != strings.Join(want, ",") {
		t.Errorf("Protect = %q, want %q", a.Serve.Protect, want)
	}
	if strings.Join(a.Serve.ShellEnv, ",") != "XDG_STATE_HOME=/var/st,PATH=/bin" {
		t.Errorf("ShellEnv = %q", a.Serve.ShellEnv)
	}
}

var testCatalog = Catalog{Affinities: []string{"workspace", "conversation", "thread"}, MaxBodyBytes: 1 << 20}

// serveEnv is a hermetic environment for LoadAdapter: a private socket and
// state directory, and the extra variables.
func serveEnv(t *testing.T, extra ...string) []string {
	return append([]string{"HOME=" + t.TempDir(), "WINX_SOCKET=" + t.TempDir() + "/winxd.sock"}, extra...)
}

func TestLoadAdapterBooleans(t *testing.T) {
	vars := []struct {
		name string
		get  func(*Serve) bool
	}{
		{"WINX_SANDBOX", func(s *Serve) bool { return s.Sandbox }},
		{"WINX_NO_REDACT", func(s *Serve) bool { return s.NoRedact }},
		{"WINX_NO_COMPRESS", func(s *Serve) bool { return s.NoCompress }},
		{"WINX_KEEP_TAIL_PIPE", func(s *Serve) bool { return s.KeepTailPipe }},
		{"WINX_OPEN_CONTEXT", func(s *Serve) bool { return s.OpenContext }},
		{"WINX_EMBEDDED", func(s *Serve) bool { return s.Runtime == RuntimeEmbedded }},
	}
	for _, v := range vars {
		for value, want := range map[string]bool{"": false, "1": true, "true": true, "On": true, "0": false, "no": false} {
			a, err := LoadAdapter(nil, serveEnv(t, v.name+"="+value), testCatalog, io.Discard)
			if err != nil {
				t.Fatalf("LoadAdapter with %s=%q: %v", v.name, value, err)
			}
			if got := v.get(&a.Serve); got != want {
				t.Errorf("LoadAdapter with %s=%q: %v, want %v", v.name, value, got, want)
			}
		}
		var stderr strings.Builder
		_, err := LoadAdapter([]string{"serve"}, serveEnv(t, v.name+"=maybe"), testCatalog, &stderr)
		var ve *VarError
		if !errors.Is(err, ErrUsage) || !errors.As(err, &ve) || ve.Name != v.name {
			t.Errorf("LoadAdapter with %s=maybe = %v, want a usage error with a *VarError naming it", v.name, err)
		}
		if !strings.Contains(stderr.String(), v.name) {
			t.Errorf("LoadAdapter with %s=maybe printed %q, want the variable named", v.name, stderr.String())
		}
	}
}

func TestLoadAdapterReadsNoRedactOnce(t *testing.T) {
	// One variable, one field: the runtime and the catalog's redactor are
	// both built from Serve.NoRedact.
	a, err := LoadAdapter(nil, serveEnv(t, "WINX_NO_REDACT=yes"), testCatalog, io.Discard)
	if err != nil || !a.Serve.NoRedact {
		t.Fatalf("LoadAdapter with WINX_NO_REDACT=yes = %+v, %v", a, err)
	}
}

func TestLoadAdapterIntegers(t *testing.T) {
	a, err := LoadAdapter(nil, serveEnv(t,
		"WINX_CODING_TOKEN_BUDGET=100", "WINX_READ_PARALLELISM=32",
		"WINX_USAGE_LOG=/x/usage.jsonl", "WINX_USAGE_RETENTION_DAYS=0", "WINX_USAGE_ROTATION=hourly",
	), testCatalog, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Serve
	// Unset means the default, 0.
	if s.CodingTokenBudget != 100 || s.NonCodingTokenBudget != 0 || s.ReadParallelism != 32 {
		t.Errorf("budgets = %d, %d, %d; want 100, 0, 32", s.CodingTokenBudget, s.NonCodingTokenBudget, s.ReadParallelism)
	}
	if s.UsageLog != "/x/usage.jsonl" || s.Usage.RetentionDays != usage.KeepForever || s.Usage.Rotation != "hourly" {
		t.Errorf("usage log = %q %+v, want retention KeepForever and hourly rotation", s.UsageLog, s.Usage)
	}
	a, err = LoadAdapter(nil, serveEnv(t, "WINX_USAGE_LOG=/x/u", "WINX_USAGE_RETENTION_DAYS=7"), testCatalog, io.Discard)
	if err != nil || a.Serve.Usage.RetentionDays != 7 {
		t.Errorf("retention 7 = %+v, %v", a.Serve.Usage, err)
	}
	_, err = LoadAdapter(nil, serveEnv(t, "WINX_USAGE_LOG=/x/u", "WINX_USAGE_RETENTION_DAYS=week"), testCatalog, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "WINX_USAGE_RETENTION_DAYS") {
		t.Errorf("retention week = %v, want an error naming WINX_USAGE_RETENTION_DAYS", err)
	}
	// Without a log the retention is not read.
	if _, err := LoadAdapter(nil, serveEnv(t, "WINX_USAGE_RETENTION_DAYS=week"), testCatalog, io.Discard); err != nil {
		t.Errorf("retention without a log = %v, want nil", err)
	}
}

func TestLoadAdapterServe(t *testing.T) {
	tmp := t.TempDir()
	a, err := LoadAdapter([]string{"serve", "--http", "--token", "t", "--allow-tool", "A", "--allow-tool", "B", "--session-affinity", "thread"},
		[]string{"HOME=/h", "XDG_STATE_HOME=" + tmp, "WINX_HTTP_TOKEN_FILE=x", "WINX_SHELL=zsh", "WINX_ALLOW_PATHS=/opt:/srv", "WINX_HTTP_TOKEN=", "WINX_SOCKET=/s/winxd.sock"},
		testCatalog, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Serve
	if a.Command != CommandServe || !s.HTTP || s.Token != "t" || strings.Join(s.AllowTools, ",") != "A,B" || s.SessionAffinity != "thread" ||
		s.Shell != "zsh" || len(s.AllowPaths) != 2 || s.StateDir != tmp+"/winx" || s.MaxBodyBytes != 1<<20 || s.Runtime != RuntimeDaemon {
		t.Errorf("LoadAdapter = %+v", s)
	}
	if s.REST {
		t.Errorf("LoadAdapter without --rest: REST = true, want the REST API off by default")
	}
	if a, err := LoadAdapter([]string{"serve", "--http", "--token", "t", "--rest"}, serveEnv(t), testCatalog, io.Discard); err != nil || !a.Serve.REST {
		t.Errorf("LoadAdapter(--http --rest) = %+v, %v; want REST on", a.Serve.REST, err)
	}
	if s.Getenv("WINX_SOCKET") != "/s/winxd.sock" {
		t.Errorf("Getenv(WINX_SOCKET) = %q", s.Getenv("WINX_SOCKET"))
	}

	refusals := []struct {
		args   []string
		env    []string
		stderr string
	}{
		{[]string{"--http"}, nil, "--token-file"},
		{[]string{"--http", "--token", "t"}, []string{"WINX_HTTP_TOKEN=u"}, "exactly one"},
		{[]string{"--http", "--principal-config", "p", "--allow-tool", "A"}, nil, "--allow-tool"},
		{[]string{"--http", "--token", "t", "--max-concurrency", "0"}, nil, "--max-concurrency"},
		{[]string{"--session-affinity", "user"}, nil, "--session-affinity"},
		{[]string{"--rest"}, nil, "--rest needs --http"},
		{[]string{"extra"}, nil, "unexpected argument"},
		{[]string{"--port", "1"}, nil, "winx: flag provided but not defined: -port\nrun 'winx --help' for usage\n"},
	}
	for _, r := range refusals {
		var stderr strings.Builder
		_, err := LoadAdapter(r.args, serveEnv(t, r.env...), testCatalog, &stderr)
		if !errors.Is(err, ErrUsage) || !strings.Contains(stderr.String(), r.stderr) {
			t.Errorf("LoadAdapter(%q) = %v, stderr %q; want a usage error naming %q", r.args, err, stderr.String(), r.stderr)
		}
	}
	if _, err := LoadAdapter([]string{"-help"}, nil, testCatalog, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("LoadAdapter(-help) = %v, want flag.ErrHelp", err)
	}
	// --version reads no environment: a bad variable does not stop it.
	if a, err := LoadAdapter([]string{"--version"}, []string{"WINX_SANDBOX=maybe"}, testCatalog, io.Discard); err != nil || !a.Serve.Version {
		t.Errorf("LoadAdapter(--version) = %+v, %v", a, err)
	}
	// An unknown runtime or path list stops start-up, as a plain error.
	for _, env := range []string{"WINX_RUNTIME=threads", "WINX_ALLOW_PATHS=relative"} {
		if _, err := LoadAdapter(nil, serveEnv(t, env), testCatalog, io.Discard); err == nil || errors.Is(err, ErrUsage) {
			t.Errorf("LoadAdapter with %s = %v, want an error", env, err)
		}
	}
}

func TestLoadAdapterOperator(t *testing.T) {
	env := serveEnv(t, "WINX_RUNTIME=threads", "WINX_HTTP_TOKEN=secret", "WINXD_BIN=/opt/winxd")
	tests := []struct {
		args []string
		want operator.Command
	}{
		{[]string{"list"}, operator.Command{Name: "list"}},
		{[]string{"attach", "t1", "--follow"}, operator.Command{Name: "attach", Thread: "t1", Follow: true}},
		{[]string{"attach", "--follow", "t1"}, operator.Command{Name: "attach", Thread: "t1", Follow: true}},
		{[]string{"kill", "--all"}, operator.Command{Name: "kill", All: true}},
		{[]string{"kill", "t2"}, operator.Command{Name: "kill", Thread: "t2"}},
		{[]string{"doctor"}, operator.Command{Name: "doctor"}},
		{[]string{"jobs"}, operator.Command{Name: "jobs"}},
		{[]string{"jobs", "t3"}, operator.Command{Name: "jobs", Thread: "t3"}},
	}
	for _, tt := range tests {
		a, err := LoadAdapter(tt.args, env, testCatalog, io.Discard)
		if err != nil {
			t.Fatalf("LoadAdapter(%q) = %v", tt.args, err)
		}
		if a.Command != tt.want.Name || a.Operator != tt.want {
			t.Errorf("LoadAdapter(%q) = %+v, want %+v", tt.args, a.Operator, tt.want)
		}
	}
	a, err := LoadAdapter([]string{"prune", "--idle-seconds", "90"}, env, testCatalog, io.Discard)
	if err != nil || a.Operator.Idle == nil || *a.Operator.Idle != 90*time.Second {
		t.Errorf("prune --idle-seconds 90 = %+v, %v", a, err)
	}
	o := a.OperatorOptions
	// An invalid runtime does not stop an operator command: doctor reports it.
	if o.RuntimeErr == nil || o.WinxdBin != "/opt/winxd" || o.Paths.Daemon == "" {
		t.Errorf("operator options = %+v", o)
	}
	for _, kv := range o.DaemonEnv {
		if strings.HasPrefix(kv, "WINX_HTTP_TOKEN=") {
			t.Errorf("winxd would inherit %s", kv)
		}
	}
	for _, args := range [][]string{{"attach"}, {"kill"}, {"list", "x"}, {"prune", "--idle-seconds", "-2"}, {"list", "--all"}} {
		if _, err := LoadAdapter(args, env, testCatalog, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("LoadAdapter(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestLoadReport(t *testing.T) {
	a, err := LoadAdapter([]string{"report", "--last", "3"}, []string{"WINX_USAGE_LOG=/x/u"}, testCatalog, io.Discard)
	if err != nil || a.Command != CommandReport || a.Report != (Report{Log: "/x/u", Last: 3}) {
		t.Errorf("report = %+v, %v", a, err)
	}
	if _, err := LoadAdapter([]string{"report"}, nil, testCatalog, io.Discard); !errors.Is(err, ErrUsage) {
		t.Errorf("report without a log = %v, want a usage error", err)
	}
}

func TestLoadDaemon(t *testing.T) {
	dir := t.TempDir()
	getenv := Lookup([]string{"WINX_SOCKET=" + dir + "/winxd.sock", "XDG_STATE_HOME=" + dir, "WINX_MAX_GUARDIANS=5", "WINX_GUARDIAN_BIN=/opt/g"})
	d, err := LoadDaemon(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d.Socket != dir+"/winxd.sock" || d.MaxGuardians != 5 || d.GuardianBin != "/opt/g" || d.StateDir != dir+"/winx" || d.LogFile != dir+"/winx/winxd.log" {
		t.Errorf("LoadDaemon = %+v", d)
	}
	if d.SecretFile != dir+"/winx/"+wire.SecretFileName {
		t.Errorf("LoadDaemon secret file = %q, want it in the state directory", d.SecretFile)
	}
	if d, err := LoadDaemon([]string{"-max-guardians", "2", "-socket", "/s/d.sock"}, getenv, io.Discard); err != nil || d.MaxGuardians != 2 || d.Socket != "/s/d.sock" {
		t.Errorf("LoadDaemon with flags = %+v, %v", d, err)
	}
	for _, v := range []string{"0", "many"} {
		_, err := LoadDaemon(nil, Lookup([]string{"WINX_MAX_GUARDIANS=" + v}), io.Discard)
		if err == nil || errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "WINX_MAX_GUARDIANS") {
			t.Errorf("WINX_MAX_GUARDIANS=%s: %v, want an error naming it", v, err)
		}
	}
	for _, args := range [][]string{{"extra"}, {"-socket", "rel.sock"}, {"-nope"}} {
		if _, err := LoadDaemon(args, getenv, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("LoadDaemon(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestLoadGuardian(t *testing.T) {
	getenv := Lookup([]string{remote.EnvKey + "=k1", remote.EnvDir + "=/w", remote.EnvWorkspace + "=/ws"})
	g, err := LoadGuardian([]string{"-sandbox", "-shell", "zsh"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if g.Remote.Key != "k1" || g.Remote.Dir != "/w" || g.Remote.Workspace != "/ws" || !g.Remote.Sandbox || g.Remote.Shell != "zsh" {
		t.Errorf("LoadGuardian = %+v", g.Remote)
	}
	// Flags win over the hand-off variables.
	if g, err := LoadGuardian([]string{"-key", "k2"}, getenv, io.Discard); err != nil || g.Remote.Key != "k2" {
		t.Errorf("LoadGuardian(-key k2) = %+v, %v", g, err)
	}
	if _, err := LoadGuardian(nil, Lookup(nil), io.Discard); !errors.Is(err, ErrUsage) {
		t.Errorf("LoadGuardian without a key = %v, want a usage error", err)
	}
	// The wire secret comes on a descriptor only, never from a variable.
	g, err = LoadGuardian([]string{"-secret-fd", "4"}, Lookup([]string{remote.EnvKey + "=k", remote.EnvDir + "=/w", "WINX_WIRE_SECRET=" + wire.NewSecret()}), io.Discard)
	if err != nil || g.Remote.SecretFD != 4 || g.Remote.Secret != "" {
		t.Errorf("LoadGuardian -secret-fd 4 = %+v, %v", g, err)
	}
}

// TestOutOfRange: a value outside its documented range, of a variable winx
// reads or of one it hands to the winxd it starts, stops serve start-up
// naming the variable, and doctor's configuration section warns of it.
func TestOutOfRange(t *testing.T) {
	for _, kv := range []string{
		"WINX_MAX_GUARDIANS=0",
		"WINX_MAX_GUARDIANS=5000",
		"WINX_READ_PARALLELISM=99",
		"WINX_READ_PARALLELISM=0",
		"WINX_READ_PARALLELISM=lots",
		"WINX_SESSION_IDLE_TTL_SECS=-5",
		"WINX_UNUSED_SESSION_IDLE_TTL_SECS=315360001",
		"WINX_GUARDIAN_SWEEP_INTERVAL_SECS=x",
		"WINX_NONCODING_TOKEN_BUDGET=-5",
		"WINX_CODING_TOKEN_BUDGET=0",
		"WINX_USAGE_LOG_KEEP_DAYS=-1",
	} {
		name, value, _ := strings.Cut(kv, "=")
		t.Run(kv, func(t *testing.T) {
			var stderr strings.Builder
			_, err := LoadAdapter([]string{"serve"}, serveEnv(t, kv), testCatalog, &stderr)
			var ve *VarError
			if !errors.Is(err, ErrUsage) || !errors.As(err, &ve) || ve.Name != name {
				t.Errorf("LoadAdapter with %s = %v, want a usage error with a *VarError naming it", kv, err)
			}
			if !strings.Contains(stderr.String(), "winx: "+name) {
				t.Errorf("LoadAdapter with %s printed %q, want winx: %s...", kv, stderr.String(), name)
			}
			var warned bool
			for _, st := range Settings(Lookup([]string{kv})) {
				if st.Name == name {
					warned = st.Warning != "" && st.Value == value
				} else if st.Warning != "" {
					t.Errorf("Settings(%s) warns of %s: %s", kv, st.Name, st.Warning)
				}
			}
			if !warned {
				t.Errorf("Settings(%s) shows no warning for %s", kv, name)
			}
		})
	}
}

// TestLoadDaemonExplainsRefusals: every command line winxd refuses is
// explained on stderr (the adapter that starts winxd quotes it), not only
// the ones the flag package itself rejects.
func TestLoadDaemonExplainsRefusals(t *testing.T) {
	for _, args := range [][]string{
		{"-max-guardians", "0"},
		{"-log-max-bytes", "1"},
		{"-socket", "rel"},
		{"extra"},
	} {
		var stderr strings.Builder
		_, err := LoadDaemon(args, Lookup(nil), &stderr)
		if !errors.Is(err, ErrUsage) || !strings.HasPrefix(stderr.String(), "winxd: ") {
			t.Errorf("LoadDaemon(%q) = %v, stderr %q; want a usage error explained as winxd: ...", args, err, stderr.String())
		}
	}
}
