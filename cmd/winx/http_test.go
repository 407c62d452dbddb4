package main

// `winx serve --http` driven in process through run(): flag handling, the
// token-file and bind refusals, the endpoint behind a real listener on
// 127.0.0.1, and graceful shutdown when the context ends.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"winx/auth"
	"winx/mcp"
	"winx/mcp/httpserve"
)

// serveTestToken is 41 bytes of visible ASCII.
const serveTestToken = "winx-http-test-token-0123456789abcdefghijk"

// servingLine matches the line winx serve --http logs (text or JSON) once
// it listens, capturing the address it listens on.
var servingLine = regexp.MustCompile(`serving Streamable HTTP.*?addr"?[=:]"?(127\.0\.0\.1:[0-9]+)`)

// servingAddr waits until stderr holds the line winx serve --http logs
// once it listens and returns the address named there. Servers under test
// bind 127.0.0.1:0 and the kernel picks the port: no test reserves a port
// that another process could take before the server listens on it. It
// fails the test if exited delivers first (the server ended) or after
// startupTimeout.
func servingAddr(t testing.TB, stderr *syncBuffer, exited <-chan error) string {
	t.Helper()
	deadline := time.Now().Add(startupTimeout)
	for {
		if m := servingLine.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case err := <-exited:
			t.Fatalf("winx serve --http ended before listening: %v; stderr:\n%s", err, stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("winx serve --http did not listen within %v; stderr:\n%s", startupTimeout, stderr)
		}
	}
}

// darkPort returns a port that was free a moment ago on 127.0.0.1, for a
// server that must refuse to start: the test checks that nothing listens
// there afterwards. A server that is meant to listen binds
// 127.0.0.1:0 instead (servingAddr).
func darkPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// writeServeToken writes a token file with exactly perm.
func writeServeToken(t *testing.T, dir, token string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runningServe is run(ctx, "serve --http ...") in a goroutine.
type runningServe struct {
	base   string // http://127.0.0.1:PORT
	port   string
	cancel context.CancelFunc
	done   chan error
	stderr *syncBuffer
	client *http.Client

	once    sync.Once
	stopErr error
}

// startServe runs winx serve --http on a fresh port with a good token and
// extra flags, and waits until /healthz answers.
func startServe(t *testing.T, extra ...string) *runningServe {
	t.Helper()
	tokenFile := writeServeToken(t, t.TempDir(), serveTestToken, 0o600)
	args := append([]string{"serve", "--http", "--bind", "127.0.0.1:0", "--token-file", tokenFile}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningServe{
		cancel: cancel,
		done:   make(chan error, 1),
		stderr: &syncBuffer{},
		client: &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second},
	}
	go func() { s.done <- run(ctx, args, strings.NewReader(""), io.Discard, s.stderr) }()
	t.Cleanup(func() {
		s.client.CloseIdleConnections()
		if err := s.stop(); err != nil {
			t.Errorf("run(%q) after cancel = %v, want nil", args, err)
		}
	})
	s.setAddr(servingAddr(t, s.stderr, s.done))

	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := s.client.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-s.done:
			s.done <- err // keep it for stop
			t.Fatalf("run(%q) = %v before serving; stderr:\n%s", args, err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("winx serve --http on %s not healthy after 10s; stderr:\n%s", s.base, s.stderr)
		}
	}
}

// setAddr records the address the server listens on.
func (s *runningServe) setAddr(addr string) {
	s.base = "http://" + addr
	_, s.port, _ = net.SplitHostPort(addr)
}

// stop cancels run's context and returns what run returned. It gives up
// after a bound well above what a graceful shutdown of idle connections
// needs, reporting that as an error.
func (s *runningServe) stop() error {
	s.once.Do(func() {
		s.cancel()
		select {
		case s.stopErr = <-s.done:
		case <-time.After(httpserve.ShutdownGrace + 10*time.Second):
			s.stopErr = errors.New("run did not return after its context was cancelled")
		}
	})
	return s.stopErr
}

// post sends one JSON-RPC body to /mcp with the given headers.
func (s *runningServe) post(t *testing.T, hdr http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	if h := hdr.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("POST /mcp: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// discoverHeader is a 2026-07-28 server/discover POST's headers, with the
// Authorization value auth ("" for none).
func discoverHeader(auth string) http.Header {
	h := http.Header{}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", mcp.Version20260728)
	h.Set("Mcp-Method", "server/discover")
	return h
}

const discoverBody = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"http-test","version":"1"}}}}`

func TestServeHTTPRefuses(t *testing.T) {
	tests := []struct {
		name string
		// args builds the arguments after "serve"; port is free.
		args      func(t *testing.T, dir, port string) []string
		wantErr   error  // checked with errors.Is when set
		wantInErr string // a path or flag the message must name, when set
		stderr    string // text stderr must contain, when set
	}{
		{
			name: "token file mode 0644",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "127.0.0.1:" + port, "--token-file", writeServeToken(t, dir, serveTestToken, 0o644)}
			},
			wantErr:   auth.ErrTokenFileMode,
			wantInErr: "token",
		},
		{
			name: "token file mode 0640",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "127.0.0.1:" + port, "--token-file", writeServeToken(t, dir, serveTestToken, 0o640)}
			},
			wantErr: auth.ErrTokenFileMode,
		},
		{
			name: "token shorter than 32 bytes",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "127.0.0.1:" + port, "--token-file", writeServeToken(t, dir, serveTestToken[:31], 0o600)}
			},
			wantErr: auth.ErrTokenTooShort,
		},
		{
			name: "token file is a symlink",
			args: func(t *testing.T, dir, port string) []string {
				target := writeServeToken(t, dir, serveTestToken, 0o600)
				link := filepath.Join(dir, "link")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				return []string{"--http", "--bind", "127.0.0.1:" + port, "--token-file", link}
			},
			wantErr: auth.ErrTokenFileKind,
		},
		{
			name: "token file missing",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "127.0.0.1:" + port, "--token-file", filepath.Join(dir, "absent")}
			},
			wantErr: fs.ErrNotExist,
		},
		{
			name: "http without token file",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "127.0.0.1:" + port}
			},
			wantErr: errUsage,
			stderr:  "--token-file",
		},
		{
			name: "bind 0.0.0.0",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "0.0.0.0:" + port, "--token-file", writeServeToken(t, dir, serveTestToken, 0o600)}
			},
			wantInErr: "--allow-non-loopback",
		},
		{
			name: "bind all interfaces without host",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", ":" + port, "--token-file", writeServeToken(t, dir, serveTestToken, 0o600)}
			},
			wantInErr: "--allow-non-loopback",
		},
		{
			name: "bind [::]",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "[::]:" + port, "--token-file", writeServeToken(t, dir, serveTestToken, 0o600)}
			},
			wantInErr: "--allow-non-loopback",
		},
		{
			name: "bind without port",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--bind", "127.0.0.1", "--token-file", writeServeToken(t, dir, serveTestToken, 0o600)}
			},
			wantInErr: "--bind",
		},
		{
			name: "unknown flag",
			args: func(t *testing.T, dir, port string) []string {
				return []string{"--http", "--port", port}
			},
			wantErr: errUsage,
			stderr:  "winx: flag provided but not defined: -port",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			port := darkPort(t)
			args := append([]string{"serve"}, tt.args(t, dir, port)...)
			// A refusal returns at once; a server that started anyway
			// would run until this context ends and return nil.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stderr syncBuffer
			err := run(ctx, args, strings.NewReader(""), io.Discard, &stderr)
			if err == nil {
				t.Fatalf("run(%q) = nil, want a refusal", args)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("run(%q) = %v, want %v", args, err, tt.wantErr)
			}
			if tt.wantErr == nil && errors.Is(err, errUsage) {
				t.Errorf("run(%q) = %v, want a refusal other than a usage error", args, err)
			}
			if tt.wantInErr != "" && !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("run(%q) = %q, want it to name %q", args, err, tt.wantInErr)
			}
			if tt.stderr != "" && !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) stderr = %q, want it to contain %q", args, stderr.String(), tt.stderr)
			}
			if strings.Contains(err.Error(), serveTestToken[:31]) || strings.Contains(stderr.String(), serveTestToken[:31]) {
				t.Errorf("run(%q) leaked the token: err %q, stderr %q", args, err, stderr.String())
			}
			// Nothing was left listening on the port.
			if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
				c.Close()
				t.Errorf("run(%q) left 127.0.0.1:%s listening", args, port)
			}
		})
	}
}

func TestServeHTTPPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tokenFile := writeServeToken(t, t.TempDir(), serveTestToken, 0o600)
	args := []string{"serve", "--http", "--bind", ln.Addr().String(), "--token-file", tokenFile}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := run(ctx, args, strings.NewReader(""), io.Discard, io.Discard); err == nil {
		t.Errorf("run(%q) on a taken port = nil, want an error", args)
	}
}

func TestServeHTTP(t *testing.T) {
	s := startServe(t)

	t.Run("healthz", func(t *testing.T) {
		resp, err := s.client.Get(s.base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
			t.Errorf("GET /healthz = %d %q, want 200 \"ok\\n\"", resp.StatusCode, body)
		}
	})

	t.Run("oauth discovery paths", func(t *testing.T) {
		for _, path := range []string{
			"/.well-known/oauth-protected-resource",
			"/.well-known/oauth-protected-resource/mcp",
			"/.well-known/oauth-authorization-server",
			"/.well-known/openid-configuration",
		} {
			resp, err := s.client.Get(s.base + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s status = %d, want 404", path, resp.StatusCode)
			}
		}
	})

	tests := []struct {
		name       string
		header     http.Header
		wantStatus int
	}{
		{"bearer token", discoverHeader("Bearer " + serveTestToken), http.StatusOK},
		{"lowercase scheme", discoverHeader("bearer " + serveTestToken), http.StatusOK},
		{"no Authorization", discoverHeader(""), http.StatusUnauthorized},
		{"wrong token", discoverHeader("Bearer " + strings.Repeat("x", len(serveTestToken))), http.StatusUnauthorized},
		{"token prefix", discoverHeader("Bearer " + serveTestToken[:len(serveTestToken)-1]), http.StatusUnauthorized},
		{"token in basic scheme", discoverHeader("Basic " + serveTestToken), http.StatusUnauthorized},
		{"foreign Host", hdrSet(discoverHeader("Bearer "+serveTestToken), "Host", "evil.example.com"), http.StatusForbidden},
		{"foreign Origin", hdrSet(discoverHeader("Bearer "+serveTestToken), "Origin", "http://evil.example.com"), http.StatusForbidden},
		{"loopback Origin", hdrSet(discoverHeader("Bearer "+serveTestToken), "Origin", "http://127.0.0.1:"), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if o := tt.header.Get("Origin"); strings.HasSuffix(o, ":") {
				tt.header.Set("Origin", o+s.port)
			}
			resp, body := s.post(t, tt.header, discoverBody)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("POST /mcp server/discover status = %d (%q), want %d", resp.StatusCode, body, tt.wantStatus)
			}
			switch tt.wantStatus {
			case http.StatusUnauthorized:
				if wa := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer") {
					t.Errorf("401 WWW-Authenticate = %q, want Bearer...", wa)
				}
			case http.StatusOK:
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result struct {
						ResultType string                     `json:"resultType"`
						Meta       map[string]json.RawMessage `json:"_meta"`
					} `json:"result"`
				}
				if err := json.Unmarshal(body, &m); err != nil {
					t.Fatalf("server/discover body %q: %v", body, err)
				}
				var info mcp.Implementation
				_ = json.Unmarshal(m.Result.Meta[mcp.MetaServerInfo], &info)
				if string(m.ID) != "1" || m.Result.ResultType != mcp.ResultComplete || info.Name != "winx" {
					t.Errorf("server/discover = %s, want id 1, resultType complete, serverInfo winx", body)
				}
			}
		})
	}

	t.Run("legacy session", func(t *testing.T) {
		h := http.Header{}
		h.Set("Authorization", "Bearer "+serveTestToken)
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
		resp, body := s.post(t, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("initialize = %d %q (session %q), want 200 with a session", resp.StatusCode, body, sid)
		}
		h.Set("Mcp-Session-Id", sid)
		h.Set("MCP-Protocol-Version", mcp.Version20251125)
		resp, body = s.post(t, h, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"result":{}`)) {
			t.Errorf("ping in session = %d %q, want 200 with result {}", resp.StatusCode, body)
		}
	})

	if err := s.stop(); err != nil {
		t.Errorf("run after cancel = %v, want nil", err)
	}
	if _, err := s.client.Get(s.base + "/healthz"); err == nil {
		t.Errorf("GET /healthz after shutdown succeeded, want the listener closed")
	}
}

func hdrSet(h http.Header, key, value string) http.Header {
	h.Set(key, value)
	return h
}

func TestServeHTTPAllowedHost(t *testing.T) {
	s := startServe(t, "--allowed-host", "winx.internal", "--allowed-host", "other.internal")
	tests := []struct {
		name       string
		key, value string
		wantStatus int
	}{
		{"allowed Host", "Host", "winx.internal:", http.StatusOK},
		{"second allowed Host", "Host", "other.internal:", http.StatusOK},
		{"allowed Host upper case", "Host", "WINX.INTERNAL:", http.StatusOK},
		{"allowed Origin", "Origin", "https://winx.internal", http.StatusOK},
		{"other Host", "Host", "evil.internal:", http.StatusForbidden},
		{"suffix of allowed Host", "Host", "x.winx.internal:", http.StatusForbidden},
		{"other Origin", "Origin", "https://evil.internal", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.value
			if strings.HasSuffix(v, ":") {
				v += s.port
			}
			resp, body := s.post(t, hdrSet(discoverHeader("Bearer "+serveTestToken), tt.key, v), discoverBody)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("POST /mcp with %s %q status = %d (%q), want %d", tt.key, v, resp.StatusCode, body, tt.wantStatus)
			}
		})
	}
}

// TestServeHTTPShutdownWithOpenStream: a stream that never ends on its own
// (a subscriptions/listen POST, a legacy GET stream) must not hold up
// shutdown: cancelling run's context ends them and run returns nil promptly.
func TestServeHTTPShutdownWithOpenStream(t *testing.T) {
	const prompt = 5 * time.Second
	tests := []struct {
		name string
		open func(t *testing.T, s *runningServe) *http.Response
	}{
		{"subscriptions/listen", openListen},
		{"legacy GET stream", openLegacyGet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServe(t)
			resp := tt.open(t, s)
			defer resp.Body.Close()

			s.cancel()
			select {
			case err := <-s.done:
				s.done <- err
				if err != nil {
					t.Errorf("run with an open %s after cancel = %v, want nil", tt.name, err)
				}
			case <-time.After(prompt):
				t.Errorf("BUG: run still shutting down %v after cancel while a %s is open (http.Server.Shutdown waits for the stream; request contexts are never cancelled)", prompt, tt.name)
				// Let shutdown finish so the cleanup's stop does not wait
				// the full grace period.
				resp.Body.Close()
			}
		})
	}
}

// openListen starts a 2026-07-28 subscriptions/listen and reads its
// acknowledgement, so the stream is known to be open.
func openListen(t *testing.T, s *runningServe) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{` +
		`"notifications":{"toolsListChanged":true},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	h := discoverHeader("Bearer " + serveTestToken)
	h.Set("Mcp-Method", "subscriptions/listen")
	req, err := http.NewRequest(http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	return openStream(t, s, req, "notifications/subscriptions/acknowledged")
}

// openLegacyGet initializes a legacy session and opens its GET stream.
func openLegacyGet(t *testing.T, s *runningServe) *http.Response {
	t.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+serveTestToken)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	resp, body := s.post(t, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize = %d %q, want 200 with a session", resp.StatusCode, body)
	}
	req, err := http.NewRequest(http.MethodGet, s.base+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+serveTestToken)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
	return openStream(t, s, req, "")
}

// openStream sends req on a client without a timeout (the stream is meant
// to stay open), checks it is an event stream and, when first is set, reads
// events until one with that method arrives.
func openStream(t *testing.T, s *runningServe, req *http.Request, first string) *http.Response {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s /mcp: %v", req.Method, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		t.Fatalf("%s /mcp = %d %s %q, want 200 text/event-stream", req.Method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if first == "" {
		return resp
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && m.Method == first {
			return resp
		}
	}
	resp.Body.Close()
	t.Fatalf("stream ended before %s: %v", first, sc.Err())
	return nil
}
