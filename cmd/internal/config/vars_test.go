package config

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/daemon"
	"winx/guardian/daemon/operator"
)

func TestLoadDaemonIdlePolicy(t *testing.T) {
	dir := t.TempDir()
	base := []string{"WINX_SOCKET=" + dir + "/winxd.sock", "XDG_STATE_HOME=" + dir}
	tests := []struct {
		name                   string
		env, args              []string
		used, neverUsed, sweep time.Duration
	}{
		{"defaults", nil, nil, daemon.DefaultUsedTTL, daemon.DefaultNeverUsedTTL, daemon.DefaultSweepInterval},
		{"variables", []string{"WINX_SESSION_IDLE_TTL_SECS=60", "WINX_UNUSED_SESSION_IDLE_TTL_SECS=2", "WINX_GUARDIAN_SWEEP_INTERVAL_SECS=1"}, nil,
			time.Minute, 2 * time.Second, time.Second},
		{"zero disables", []string{"WINX_SESSION_IDLE_TTL_SECS=0", "WINX_UNUSED_SESSION_IDLE_TTL_SECS=0", "WINX_GUARDIAN_SWEEP_INTERVAL_SECS=0"}, nil,
			Disabled, Disabled, Disabled},
		{"flags win", []string{"WINX_SESSION_IDLE_TTL_SECS=60"}, []string{"-used-ttl", "5s"}, 5 * time.Second, daemon.DefaultNeverUsedTTL, daemon.DefaultSweepInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := LoadDaemon(tt.args, Lookup(append(append([]string{}, base...), tt.env...)), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if d.UsedTTL != tt.used || d.NeverUsedTTL != tt.neverUsed || d.SweepInterval != tt.sweep {
				t.Errorf("LoadDaemon TTLs = %v %v %v, want %v %v %v", d.UsedTTL, d.NeverUsedTTL, d.SweepInterval, tt.used, tt.neverUsed, tt.sweep)
			}
		})
	}
	for _, v := range []string{"-1", "x", "999999999999"} {
		_, err := LoadDaemon(nil, Lookup(append(append([]string{}, base...), "WINX_SESSION_IDLE_TTL_SECS="+v)), io.Discard)
		var ve *VarError
		if !errors.As(err, &ve) || ve.Name != "WINX_SESSION_IDLE_TTL_SECS" {
			t.Errorf("WINX_SESSION_IDLE_TTL_SECS=%s: %v, want a *VarError naming it", v, err)
		}
	}
}

func TestLoadDaemonMaxGuardiansBounds(t *testing.T) {
	dir := t.TempDir()
	base := []string{"WINX_SOCKET=" + dir + "/winxd.sock", "XDG_STATE_HOME=" + dir}
	for _, tt := range []struct {
		v    string
		want int
		ok   bool
	}{{"1", 1, true}, {"4096", 4096, true}, {"", 0, true}, {"0", 0, false}, {"4097", 0, false}, {"-3", 0, false}} {
		d, err := LoadDaemon(nil, Lookup(append(append([]string{}, base...), "WINX_MAX_GUARDIANS="+tt.v)), io.Discard)
		if tt.ok != (err == nil) || (err == nil && d.MaxGuardians != tt.want) {
			t.Errorf("WINX_MAX_GUARDIANS=%q: %+v, %v; want %d (ok %v)", tt.v, d, err, tt.want, tt.ok)
		}
	}
	for _, v := range []string{"0", "4097"} {
		if _, err := LoadDaemon([]string{"-max-guardians", v}, Lookup(base), io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("-max-guardians %s = %v, want a usage error", v, err)
		}
	}
}

func TestResolveShell(t *testing.T) {
	have := map[string]bool{"bash": true, "/bin/bash": true, "/usr/bin/zsh": true}
	look := func(name string) (string, error) {
		if have[name] {
			return name, nil
		}
		return "", os.ErrNotExist
	}
	tests := []struct {
		value, want string
		warn, err   bool
	}{
		{"", ShellBash, false, false},
		{"bash", "bash", false, false},
		{"/bin/bash", "/bin/bash", false, false},
		{"/usr/bin/zsh", "/usr/bin/zsh", false, false},
		{"zsh", ShellBash, true, false},
		{"/opt/none/zsh", ShellBash, true, false},
		{"/opt/none/bash", "", false, true},
		{"fish", "", false, true},
		{"bin/bash", "", false, true},
		{"/bin/sh", "", false, true},
	}
	for _, tt := range tests {
		got, err := ResolveShell(tt.value, look)
		if (err != nil) != tt.err || got.Name != tt.want || (got.Warning != "") != tt.warn {
			t.Errorf("ResolveShell(%q) = %+v, %v; want %q warn=%v err=%v", tt.value, got, err, tt.want, tt.warn, tt.err)
		}
		var ve *VarError
		if err != nil && (!errors.As(err, &ve) || ve.Name != "WINX_SHELL") {
			t.Errorf("ResolveShell(%q) error %v is not a *VarError naming WINX_SHELL", tt.value, err)
		}
		if tt.warn && !strings.Contains(got.Warning, "bash") {
			t.Errorf("ResolveShell(%q) warning %q does not say bash runs instead", tt.value, got.Warning)
		}
	}
}

func TestLoadLog(t *testing.T) {
	for _, tt := range []struct {
		level, format string
		want          Log
		err           bool
	}{
		{"", "", Log{"info", LogFormatText}, false},
		{"DEBUG", "JSON", Log{"debug", LogFormatJSON}, false},
		{"off", "text", Log{"off", LogFormatText}, false},
		{"loud", "", Log{}, true},
		{"", "xml", Log{}, true},
	} {
		got, err := LoadLog(Lookup([]string{"WINX_LOG=" + tt.level, "WINX_LOG_FORMAT=" + tt.format}))
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("LoadLog(%q, %q) = %+v, %v; want %+v err=%v", tt.level, tt.format, got, err, tt.want, tt.err)
		}
	}
	// A bad value stops winx serve with a usage error naming it.
	_, err := LoadAdapter(nil, []string{"WINX_LOG_FORMAT=xml"}, Catalog{Affinities: []string{"workspace"}, MaxBodyBytes: 1}, io.Discard)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "WINX_LOG_FORMAT") {
		t.Errorf("LoadAdapter with WINX_LOG_FORMAT=xml = %v, want a usage error naming it", err)
	}
}

func TestLoadAdapterShellArgs(t *testing.T) {
	cat := Catalog{Affinities: []string{"workspace"}, MaxBodyBytes: 1}
	a, err := LoadAdapter(nil, []string{"WINX_SHELL_ARGS=-O globstar"}, cat, io.Discard)
	if err != nil || strings.Join(a.Serve.ShellArgs, " ") != "-O globstar" {
		t.Errorf("LoadAdapter(WINX_SHELL_ARGS=-O globstar) = %q, %v", a.Serve.ShellArgs, err)
	}
	for _, v := range []string{strings.Repeat("-x ", 33), "-" + strings.Repeat("a", 300)} {
		if _, err := LoadAdapter(nil, []string{"WINX_SHELL_ARGS=" + v}, cat, io.Discard); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "WINX_SHELL_ARGS") {
			t.Errorf("WINX_SHELL_ARGS=%.20q...: %v, want a usage error naming it", v, err)
		}
	}
}

// TestREADMEDocumentsEveryVariable: each variable of Variables has a row
// in the README's environment table showing its default.
func TestREADMEDocumentsEveryVariable(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 4 {
			continue
		}
		for _, name := range strings.Split(strings.TrimPrefix(cells[0], "| "), ", ") {
			rows[strings.Trim(name, "`")] = cells[1]
		}
	}
	for _, v := range Variables() {
		def, ok := rows[v.Name]
		if !ok {
			t.Errorf("README's environment table has no row for %s", v.Name)
			continue
		}
		want := "unset"
		if v.Default != "" {
			want = v.Default
		}
		if !strings.Contains(def, strings.Fields(want)[0]) && !(v.Name == "WINX_GUARDIAN_BIN" || v.Name == "WINXD_BIN") {
			t.Errorf("README default of %s = %q, want %q", v.Name, def, want)
		}
	}
}

func TestSettingsRedact(t *testing.T) {
	const token = "tok-0123456789abcdefghijklmnopqrstuvwxyz"
	got := Settings(Lookup([]string{
		"WINX_HTTP_TOKEN=" + token, "WINX_SHELL_ARGS=" + token,
		"WINX_SERVER_INSTRUCTIONS=be brief", "WINX_LOG=debug",
	}))
	seen := map[string]operator.Setting{}
	for _, s := range got {
		if strings.Contains(s.Value, token) {
			t.Errorf("%s shows the token: %q", s.Name, s.Value)
		}
		seen[s.Name] = s
	}
	if s := seen["WINX_LOG"]; s.Value != "debug" || s.Source != "environment" {
		t.Errorf("WINX_LOG setting = %+v", s)
	}
	if s := seen["WINX_SERVER_INSTRUCTIONS"]; s.Value != "(8 bytes)" {
		t.Errorf("WINX_SERVER_INSTRUCTIONS setting = %+v, want its length only", s)
	}
	if s := seen["WINX_MAX_GUARDIANS"]; s.Value != "32" || s.Source != "default" {
		t.Errorf("WINX_MAX_GUARDIANS setting = %+v", s)
	}
	if len(got) != len(Variables()) {
		t.Errorf("%d settings for %d variables", len(got), len(Variables()))
	}
}

// TestLoadAdapterTurnRecognizer: WINX_TURN_RECOGNIZER_CONFIG is parsed
// once at start; an invalid one stops start-up with a usage error naming
// the variable.
func TestLoadAdapterTurnRecognizer(t *testing.T) {
	cat := Catalog{Affinities: []string{"workspace"}, MaxBodyBytes: 1}
	a, err := LoadAdapter(nil, []string{`WINX_TURN_RECOGNIZER_CONFIG={"busy":["Thinking"],"awaiting_approval":["re:^Allow\\?"]}`}, cat, io.Discard)
	if err != nil || a.Serve.TurnRecognizer == nil {
		t.Fatalf("LoadAdapter with a valid recognizer = %+v, %v", a.Serve.TurnRecognizer, err)
	}
	if a, err := LoadAdapter(nil, nil, cat, io.Discard); err != nil || a.Serve.TurnRecognizer != nil {
		t.Errorf("LoadAdapter without the variable: %v, %v; want no recognizer", a.Serve.TurnRecognizer, err)
	}
	for _, v := range []string{
		`{`, `[]`, `{}`, `{"busy": ["x"], "extra": ["y"]}`, `{"busy": [""]}`, `{"awaiting_input": ["re:("]}`, `{"busy": "x"}`, `{"busy":["x"]} {}`,
	} {
		_, err := LoadAdapter(nil, []string{"WINX_TURN_RECOGNIZER_CONFIG=" + v}, cat, io.Discard)
		if !errors.Is(err, ErrUsage) || !errors.Is(err, guardian.ErrRecognizerConfig) || !strings.Contains(err.Error(), "WINX_TURN_RECOGNIZER_CONFIG") {
			t.Errorf("WINX_TURN_RECOGNIZER_CONFIG=%s: %v, want a usage error naming it", v, err)
		}
	}
}

func TestRustLogLevel(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "info", want: "info"},
		{in: "TRACE", want: "debug"},
		{in: "off", want: "off"},
		{in: "winx=warn", want: "warn"},
		{in: "winx::usage=error,hyper=debug", want: "error"},
		{in: "tower=debug,winx_code_agent=info", want: "info"},
		{in: "debug,winx=error", want: "debug"},
		{in: "hyper=warn,tokio=debug", want: "debug"},
		{in: "winx", want: "debug"},
		{in: "winx[span{a=1}]=info", want: "info"},
		{in: " info , ", want: "info"},
		{in: "winx=loud", bad: true},
	} {
		got, err := RustLogLevel(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("RustLogLevel(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
