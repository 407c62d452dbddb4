package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// stdioClient drives a running winx process line by line.
type stdioClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	lines chan string
}

func startStdio(t *testing.T) *stdioClient {
	t.Helper()
	cmd := exec.Command(buildWinx(t))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &stdioClient{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		for {
			line, err := c.out.ReadString('\n')
			if line != "" {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("winx did not exit after stdin closed")
		}
	})
	return c
}

func (c *stdioClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv returns the next message written on stdout, decoded.
func (c *stdioClient) recv() map[string]any {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("winx closed stdout")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("stdout line is not JSON (%v): %q", err, line)
		}
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no answer within 10s")
	}
	return nil
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}`

func errorCode(m map[string]any) float64 {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	code, _ := e["code"].(float64)
	return code
}

func TestStdioModernEra(t *testing.T) {
	c := startStdio(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`)
	m := c.recv()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("server/discover = %v, want a result", m)
	}
	if res["resultType"] != "complete" {
		t.Errorf("discover resultType = %v, want complete", res["resultType"])
	}
	if vs, _ := res["supportedVersions"].([]any); len(vs) == 0 || vs[0] != "2026-07-28" {
		t.Errorf("supportedVersions = %v, want 2026-07-28 first", res["supportedVersions"])
	}
	meta, _ := res["_meta"].(map[string]any)
	if info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any); info["name"] != "winx" {
		t.Errorf("serverInfo = %v, want name winx", meta)
	}

	c.send(`{"jsonrpc":"2.0","id":"two","method":"tools/list","params":{` + modernMeta + `}}`)
	m = c.recv()
	if m["id"] != "two" {
		t.Errorf("tools/list id = %v, want \"two\" echoed exactly", m["id"])
	}
	res, _ = m["result"].(map[string]any)
	if _, ok := res["tools"].([]any); !ok {
		t.Errorf("tools/list = %v, want a tools array", m)
	}
	if res["cacheScope"] != "public" || res["ttlMs"] == nil {
		t.Errorf("tools/list cache hints = %v/%v, want public and a ttl", res["cacheScope"], res["ttlMs"])
	}

	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + modernMeta + `}}`)
	if got := errorCode(c.recv()); got != -32601 {
		t.Errorf("modern ping error code = %v, want -32601 (removed in 2026-07-28)", got)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if got := errorCode(c.recv()); got != -32602 {
		t.Errorf("missing clientCapabilities error code = %v, want -32602", got)
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	m = c.recv()
	if got := errorCode(m); got != -32022 {
		t.Errorf("unsupported version error code = %v, want -32022", got)
	}
	if data, _ := m["error"].(map[string]any)["data"].(map[string]any); data["requested"] != "2099-01-01" {
		t.Errorf("unsupported version data = %v, want requested 2099-01-01", data)
	}
}

func TestStdioLegacyEra(t *testing.T) {
	c := startStdio(t)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	m := c.recv()
	res, _ := m["result"].(map[string]any)
	if res["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize = %v, want protocolVersion 2025-06-18 echoed", m)
	}
	if _, has := res["resultType"]; has {
		t.Errorf("legacy initialize carries resultType: %v", res)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m = c.recv()
	if _, ok := m["result"].(map[string]any)["tools"].([]any); !ok {
		t.Errorf("legacy tools/list = %v, want a tools array", m)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	m = c.recv()
	if r, _ := m["result"].(map[string]any); r == nil || len(r) != 0 {
		t.Errorf("ping = %v, want an empty result", m)
	}
}

func TestStdioInitializeUnknownVersion(t *testing.T) {
	c := startStdio(t)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	res, _ := c.recv()["result"].(map[string]any)
	if res["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize(1999-01-01).protocolVersion = %v, want 2025-11-25", res["protocolVersion"])
	}
}

// TestStdioBadInputKeepsServing sends each kind of bad line and checks the
// wire error, then proves the process still answers.
func TestStdioBadInputKeepsServing(t *testing.T) {
	c := startStdio(t)
	oversize := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 9<<20) + `"}}`
	cases := []struct {
		name string
		line string
		code float64
		id   any
	}{
		{"malformed", `{"jsonrpc":"2.0","id":1,"method":`, -32700, nil},
		{"not json", `hello`, -32700, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, nil},
		{"oversize", oversize, -32600, nil},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`, -32601, float64(7)},
		{"wrong version", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, -32600, float64(8)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(tc.line)
			m := c.recv()
			if got := errorCode(m); got != tc.code {
				t.Errorf("error code = %v, want %v (message %v)", got, tc.code, m)
			}
			if m["id"] != tc.id {
				t.Errorf("id = %v, want %v", m["id"], tc.id)
			}
			c.send(`{"jsonrpc":"2.0","id":"alive","method":"ping"}`)
			if m := c.recv(); m["id"] != "alive" || m["result"] == nil {
				t.Errorf("after %s, ping = %v, want a result", tc.name, m)
			}
		})
	}
}

// TestStdioExitsOnEOF checks that answers to requests already sent are
// written before the process exits on end of input.
func TestStdioExitsOnEOF(t *testing.T) {
	cmd := exec.Command(buildWinx(t))
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + "}}\n")
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("winx on a closed stdin: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("winx took %v to exit after EOF", elapsed)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"supportedVersions"`) {
		t.Errorf("stdout = %q, want exactly one discover answer", out)
	}
}
