package main

// Interoperability with two independent MCP clients: the official Go SDK
// (mcpprobe, which negotiates 2026-07-28) and the official TypeScript SDK
// (node probe.mjs, which negotiates 2025-11-25), each over stdio and over
// Streamable HTTP with a bearer token, against the real winx binary.
//
// The clients live outside the module (../shared/mcpclients). CI builds them
// and exports WINX_MCPCLIENTS; without it the test builds them with
// setup.sh, and failing that skips locally and fails in CI.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"winx/guardian/runtime"
	"winx/mcp"
	"winx/mcp/session"
	"winx/mcp/tools"
)

// Environment the CI entry point (.ci/run) exports.
const (
	envMCPClients = "WINX_MCPCLIENTS" // directory holding mcpprobe, testserver, node/probe.mjs
	envNode22Bin  = "WINX_NODE22_BIN" // directory holding a Node.js 22 binary
)

// setupScript builds the clients; relative to this package's directory
// (the module root's ../shared/mcpclients/setup.sh).
const setupScript = "../../../shared/mcpclients/setup.sh"

// Limits for the child processes the tests start.
const (
	clientTimeout  = 2 * time.Minute  // one probe run
	startupTimeout = 15 * time.Second // winx serve --http until /healthz answers
	setupTimeout   = 10 * time.Minute // setup.sh: go build of the SDK and npm ci
)

// Protocol versions the two SDK clients negotiate with winx.
const (
	goSDKProtocol = mcp.Version20260728
	tsSDKProtocol = mcp.Version20251125
)

func TestInterop(t *testing.T) {
	clients := mcpClients(t)
	bin := buildWinx(t)
	probe := filepath.Join(clients, "mcpprobe")
	nodeBin := nodeFor(t, 18) // probe.mjs needs what the TypeScript SDK needs: Node >= 18
	probeJS := filepath.Join(clients, "node", "probe.mjs")
	srv := startHTTP(t, bin)

	cases := []struct {
		name     string
		argv     []string
		protocol string
	}{
		{"go-sdk/stdio", []string{probe, "list", "--stdio", shellQuote(bin)}, goSDKProtocol},
		{"ts-sdk/stdio", []string{nodeBin, probeJS, "list", "--stdio", shellQuote(bin)}, tsSDKProtocol},
		{"go-sdk/http", []string{probe, "list", "--http", srv.endpoint, "--token", srv.token}, goSDKProtocol},
		{"ts-sdk/http", []string{nodeBin, probeJS, "list", "--http", srv.endpoint, "--token", srv.token}, tsSDKProtocol},
	}
	// Every client must see the same catalog, and only names the registry has.
	// The adapter always registers the session tools; the factory is
	// never called for listing.
	known := tools.NewRegistry(tools.Options{Sessions: session.NewSessions(runtime.Embedded(runtime.Options{}), time.Now)}).ToolNames()
	var (
		mu       sync.Mutex
		catalogs = map[string][]string{}
	)
	// The group returns only when its parallel subtests have finished.
	t.Run("list", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				stdout, stderr, code := runClient(t, tc.argv...)
				if code != 0 {
					t.Fatalf("%s exited %d, want 0\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.argv, " "), code, stdout, stderr)
				}
				l, err := parseList(stdout)
				if err != nil {
					t.Fatalf("%v\nstdout:\n%s", err, stdout)
				}
				if l.protocol != tc.protocol {
					t.Errorf("negotiated protocol = %q, want %q", l.protocol, tc.protocol)
				}
				if !strings.HasPrefix(l.server, "winx ") {
					t.Errorf("server = %q, want winx <version>", l.server)
				}
				// The catalog offers the resource winx://server/about and the
				// prompt winx_guide; the probes print only the capabilities
				// that announce them.
				var caps map[string]json.RawMessage
				if err := json.Unmarshal([]byte(l.capabilities), &caps); err != nil {
					t.Fatalf("capabilities %q: %v", l.capabilities, err)
				}
				for _, want := range []string{"tools", "prompts", "resources"} {
					if _, ok := caps[want]; !ok {
						t.Errorf("capabilities %s lack %q", l.capabilities, want)
					}
				}
				for _, name := range l.tools {
					if !slices.Contains(known, name) {
						t.Errorf("listed tool %q is not in the registry %v", name, known)
					}
				}
				mu.Lock()
				catalogs[tc.name] = l.tools
				mu.Unlock()
			})
		}
	})
	t.Run("same-catalog", func(t *testing.T) {
		var first string
		for _, tc := range cases {
			got, ok := catalogs[tc.name]
			if !ok {
				continue
			}
			if first == "" {
				first = tc.name
				continue
			}
			if !slices.Equal(got, catalogs[first]) {
				t.Errorf("%s lists tools %v, %s lists %v", tc.name, got, first, catalogs[first])
			}
		}
	})

	// Initialize without a path: a client that advertises Roots is asked
	// for them (an input_required round on 2026-07-28, a roots/list request
	// on 2025-11-25) and must be able to decode that request.
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"go-sdk/stdio/initialize-without-path", []string{probe, "call", "--stdio", "WINX_RUNTIME=embedded " + shellQuote(bin), "--tool", "Initialize", "--args", `{"type":"first_call"}`}},
		{"ts-sdk/stdio/initialize-without-path", []string{nodeBin, probeJS, "call", "--stdio", "WINX_RUNTIME=embedded " + shellQuote(bin), "--tool", "Initialize", "--args", `{"type":"first_call"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runClient(t, tc.argv...)
			if code != 0 || !strings.Contains(stdout, "thread_id") {
				t.Errorf("exit code = %d, want 0 and a thread_id\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
		})
	}

	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"go-sdk/http/wrong-token", []string{probe, "list", "--http", srv.endpoint, "--token", strings.Repeat("0", len(srv.token))}},
		{"go-sdk/http/no-token", []string{probe, "list", "--http", srv.endpoint}},
		{"ts-sdk/http/wrong-token", []string{nodeBin, probeJS, "list", "--http", srv.endpoint, "--token", strings.Repeat("0", len(srv.token))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runClient(t, tc.argv...)
			// 2 is the probes' "usage, connection or protocol error".
			if code != 2 {
				t.Errorf("exit code = %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if strings.Contains(stdout, "tools (") {
				t.Errorf("an unauthenticated client listed tools:\n%s", stdout)
			}
		})
	}
}

// listOutput is what `mcpprobe list` and `probe.mjs list` print.
type listOutput struct {
	protocol, server, capabilities string
	tools                          []string
}

var toolsHeader = regexp.MustCompile(`^tools \((\d+)\):$`)

func parseList(out string) (listOutput, error) {
	var l listOutput
	want := -1
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "protocol: "):
			l.protocol = strings.TrimPrefix(line, "protocol: ")
		case strings.HasPrefix(line, "server: "):
			l.server = strings.TrimPrefix(line, "server: ")
		case strings.HasPrefix(line, "capabilities: "):
			l.capabilities = strings.TrimPrefix(line, "capabilities: ")
		case toolsHeader.MatchString(line):
			want, _ = strconv.Atoi(toolsHeader.FindStringSubmatch(line)[1])
		case want >= 0 && strings.HasPrefix(line, "  "):
			if f := strings.Fields(line); len(f) > 0 {
				l.tools = append(l.tools, f[0])
			}
		}
	}
	if l.protocol == "" || l.server == "" || l.capabilities == "" || want < 0 {
		return l, errors.New("list output lacks protocol, server, capabilities or the tools header")
	}
	if len(l.tools) != want {
		return l, fmt.Errorf("list output announces %d tools and names %d", want, len(l.tools))
	}
	return l, nil
}

// runClient runs a client to completion and returns its output and exit code.
func runClient(t *testing.T, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runClientEnv(t, nil, argv...)
}

// runClientEnv is runClient with the environment env (nil: this process's).
func runClientEnv(t *testing.T, env []string, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	default:
		t.Fatalf("%s: %v\nstderr:\n%s", strings.Join(argv, " "), err, errb.Bytes())
	}
	return out.String(), errb.String(), code
}

// shellQuote quotes s for /bin/sh, which both probes run --stdio commands with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// skipOrFatal skips a test whose prerequisites are missing, except in CI
// (CI=true), where a missing prerequisite is a broken machine.
func skipOrFatal(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf(format, args...)
	}
	tb.Skipf(format, args...)
}

// findMCPClients returns the directory of the built clients, building them
// with setup.sh when WINX_MCPCLIENTS is unset; on failure it returns "" and
// why.
func findMCPClients(tb testing.TB) (dir, reason string) {
	tb.Helper()
	if dir := os.Getenv(envMCPClients); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "mcpprobe")); err != nil {
			return "", fmt.Sprintf("%s=%s has no mcpprobe: %v", envMCPClients, dir, err)
		}
		return dir, ""
	}
	script, err := filepath.Abs(setupScript)
	if err != nil {
		return "", err.Error()
	}
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Sprintf("%s is unset and %s is missing", envMCPClients, script)
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	out := tb.TempDir()
	cmd := exec.CommandContext(ctx, script, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("%s is unset and %s failed: %v\n%s", envMCPClients, script, err, b)
	}
	return out, ""
}

// mcpClients is findMCPClients for tests: it skips or fails when the clients
// cannot be had.
func mcpClients(tb testing.TB) string {
	tb.Helper()
	dir, reason := findMCPClients(tb)
	if dir == "" {
		skipOrFatal(tb, "MCP clients unavailable: %s", reason)
	}
	return dir
}

// nodeFor returns a node binary of at least the given major version: the one
// in WINX_NODE22_BIN, else the one on PATH.
func nodeFor(tb testing.TB, major int) string {
	tb.Helper()
	var candidates []string
	if dir := os.Getenv(envNode22Bin); dir != "" {
		candidates = append(candidates, filepath.Join(dir, "node"))
	}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	var seen []string
	for _, c := range candidates {
		out, err := exec.Command(c, "--version").Output()
		if err != nil {
			seen = append(seen, fmt.Sprintf("%s: %v", c, err))
			continue
		}
		v := strings.TrimSpace(string(out))
		maj, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
		if n, err := strconv.Atoi(maj); err == nil && n >= major {
			return c
		}
		seen = append(seen, c+" is "+v)
	}
	skipOrFatal(tb, "need Node.js >= %d (set %s or put it on PATH); found: %v", major, envNode22Bin, seen)
	return ""
}

// httpServer is a running `winx serve --http`.
type httpServer struct {
	base     string // http://127.0.0.1:PORT
	endpoint string // base + "/mcp"
	token    string
}

// newToken writes a 48-hex-character token to a 0600 file and returns both.
func newToken(tb testing.TB) (token, file string) {
	tb.Helper()
	b := make([]byte, 24)
	rand.Read(b)
	token = hex.EncodeToString(b)
	file = filepath.Join(tb.TempDir(), "token")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return token, file
}

// startHTTP starts `bin serve --http` on a loopback port the kernel picks
// with a fresh token and waits until /healthz answers. Cleanup stops it
// with SIGTERM and checks that it exits cleanly.
func startHTTP(tb testing.TB, bin string) *httpServer {
	tb.Helper()
	token, tokenFile := newToken(tb)
	// No per-IP rate limit: benchmarks and the conformance suite send
	// far more than 120 requests a minute from 127.0.0.1.
	cmd := exec.Command(bin, "serve", "--http", "--bind", "127.0.0.1:0", "--token-file", tokenFile, "--requests-per-minute", "0")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Runs last: after the SIGTERM check below, or alone if the
	// server never came up.
	tb.Cleanup(func() { cmd.Process.Kill() })
	base := "http://" + servingAddr(tb, stderr, exited)
	if err := waitHealthy(base, exited); err != nil {
		cmd.Process.Kill()
		<-exited
		tb.Fatalf("winx serve --http did not come up: %v\nstderr:\n%s", err, stderr.String())
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				tb.Errorf("winx serve --http exited with %v after SIGTERM\nstderr:\n%s", err, stderr.String())
			}
		case <-time.After(startupTimeout):
			cmd.Process.Kill()
			<-exited
			tb.Errorf("winx serve --http did not exit within %v of SIGTERM", startupTimeout)
		}
	})
	return &httpServer{base: base, endpoint: base + "/mcp", token: token}
}

// waitHealthy polls base/healthz until it answers 200, the process exits, or
// startupTimeout passes.
func waitHealthy(base string, exited <-chan error) error {
	deadline := time.Now().Add(startupTimeout)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("server exited before answering /healthz: %v", err)
		default:
		}
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer from %s/healthz within %v", base, startupTimeout)
}
