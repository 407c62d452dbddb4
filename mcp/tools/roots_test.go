package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"testing"

	"winx/mcp"
	"winx/mcp/session/sessiontest"
)

// rootsClient is a legacy (2025-11-25) stdio client that advertises Roots
// and answers roots/list with the roots it holds, counting the requests.
type rootsClient struct {
	t      *testing.T
	toSrv  *io.PipeWriter
	lines  *bufio.Scanner
	roots  []string
	asked  int
	nextID int
}

func startRootsClient(t *testing.T, srv *mcp.Server, roots ...string) *rootsClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW, nil); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		if err := <-done; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
	c := &rootsClient{t: t, toSrv: inW, lines: bufio.NewScanner(outR), roots: roots}
	c.lines.Buffer(make([]byte, 1<<20), 8<<20)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"roots-test","version":"1"}}}`)
	c.await(0)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rootsClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.toSrv, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// await reads until the answer to id, answering roots/list on the way.
func (c *rootsClient) await(id int) json.RawMessage {
	c.t.Helper()
	for c.lines.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(c.lines.Bytes(), &msg); err != nil {
			c.t.Fatalf("bad line %q: %v", c.lines.Text(), err)
		}
		switch {
		case msg.Method == "roots/list":
			c.asked++
			var roots []map[string]string
			for _, r := range c.roots {
				roots = append(roots, map[string]string{"uri": r, "name": "r"})
			}
			body, _ := json.Marshal(map[string]any{"roots": roots})
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, body))
		case msg.Method != "":
			// notifications are not part of this test
		case string(msg.ID) == fmt.Sprint(id):
			if msg.Error != nil {
				c.t.Fatalf("request %d failed: %s", id, msg.Error)
			}
			return msg.Result
		}
	}
	c.t.Fatalf("stream ended before the answer to %d: %v", id, c.lines.Err())
	return nil
}

func (c *rootsClient) initialize(args map[string]any) *initResult {
	c.t.Helper()
	c.nextID++
	body, _ := json.Marshal(map[string]any{"name": InitializeTool, "arguments": args})
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, c.nextID, body))
	var r initResult
	if err := json.Unmarshal(c.await(c.nextID), &r); err != nil {
		c.t.Fatal(err)
	}
	return &r
}

func newStdioInitServer(t *testing.T) *mcp.Server {
	t.Helper()
	s, _, _ := sessiontest.NewSessions(t)
	reg := NewRegistry(Options{Build: "test", Transport: "stdio", Sessions: s, ScratchRoot: filepath.Join(t.TempDir(), "playground")})
	return mcp.NewServer(mcp.Implementation{Name: "winx", Version: "test"}, reg, nil)
}

func TestInitializeBootstrapsFromRoots(t *testing.T) {
	root, _ := workspace(t)
	other, _ := workspace(t)
	c := startRootsClient(t, newStdioInitServer(t), "https://example.com/x", (&url.URL{Scheme: "file", Path: root}).String())

	r := c.initialize(map[string]any{})
	if r.IsError || r.Structured.Data.WorkspaceRoot != root {
		t.Fatalf("first call without a path: workspace %q (%s), want the client's file root %q", r.Structured.Data.WorkspaceRoot, r.Structured.Output, root)
	}
	if c.asked != 1 {
		t.Fatalf("roots/list asked %d times, want 1", c.asked)
	}

	// The client's roots change; an active session never moves and the
	// server does not ask again.
	c.roots = []string{(&url.URL{Scheme: "file", Path: other}).String()}
	again := c.initialize(map[string]any{})
	if again.Structured.Data.WorkspaceRoot != root || !again.Structured.Data.Reattached {
		t.Errorf("after a roots change: workspace %q reattached=%v, want %q reattached", again.Structured.Data.WorkspaceRoot, again.Structured.Data.Reattached, root)
	}
	if c.asked != 1 {
		t.Errorf("roots/list asked %d times, want still 1", c.asked)
	}

	// An explicit path still wins.
	explicit := c.initialize(map[string]any{"any_workspace_path": other})
	if explicit.Structured.Data.WorkspaceRoot != other {
		t.Errorf("explicit path: workspace %q, want %q", explicit.Structured.Data.WorkspaceRoot, other)
	}
}

func TestInitializeRootsWithoutFileRoot(t *testing.T) {
	c := startRootsClient(t, newStdioInitServer(t), "https://example.com/repo")
	r := c.initialize(map[string]any{})
	if r.IsError || !r.Structured.Data.Scratch {
		t.Errorf("no file root: got scratch=%v workspace %q (%s), want a scratch playground", r.Structured.Data.Scratch, r.Structured.Data.WorkspaceRoot, r.Structured.Output)
	}
}

func TestFirstFileRoot(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{`{"roots":[{"uri":"file:///a/b"}]}`, "/a/b"},
		{`{"roots":[{"uri":"file://localhost/a/b/../c"}]}`, "/a/c"},
		{`{"roots":[{"uri":"file://otherhost/a"},{"uri":"file:///z"}]}`, "/z"},
		{`{"roots":[{"uri":"file:relative"}]}`, ""},
		{`{"roots":[]}`, ""},
		{`not json`, ""},
	} {
		if got := firstFileRoot(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("firstFileRoot(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
