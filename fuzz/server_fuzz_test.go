package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"winx/mcp"
	"winx/mcp/tools"
)

func newServer() *mcp.Server {
	reg := tools.NewRegistry(tools.Options{Build: "fuzz", Transport: "fuzz"})
	return mcp.NewServer(mcp.Implementation{Name: "winx", Version: "fuzz"}, reg, nil)
}

var stdioSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"winx://server/about"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"winx_guide","arguments":{"workspace":"/x"}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","arguments":[]}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	"{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}\r\n\n\n",
	`{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"winx_guide"},"argument":{"name":"workspace","value":""}}}`,
}

// FuzzServeStdio feeds raw bytes to the stdio transport. Properties: no
// panic, the server returns once input ends, and every line it writes is
// one JSON-RPC message.
func FuzzServeStdio(f *testing.F) {
	for _, s := range stdioSeeds {
		f.Add([]byte(s))
	}
	srv := newServer()
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.ServeStdio(ctx, bytes.NewReader(in), &out, &mcp.StdioOptions{MaxLine: 64 << 10}); err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("stdout line is not a JSON object: %q", sc.Bytes())
			}
			if string(m["jsonrpc"]) != `"2.0"` {
				t.Fatalf("stdout line without jsonrpc 2.0: %q", sc.Bytes())
			}
		}
	})
}

// FuzzHTTPPost feeds raw bodies and protocol headers to the Streamable HTTP
// handler. Properties: no panic, a status is always written, and JSON
// answers are JSON.
func FuzzHTTPPost(f *testing.F) {
	for _, s := range stdioSeeds {
		f.Add([]byte(s), "2026-07-28", "server/discover", "")
		f.Add([]byte(s), "2025-11-25", "", "")
	}
	h := mcp.NewHTTPHandler(newServer(), &mcp.HTTPOptions{MaxBodyBytes: 1 << 20})
	f.Fuzz(func(t *testing.T, body []byte, version, method, name string) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if v != "" && validHeaderValue(v) {
				req.Header.Set(k, v)
			}
		}
		ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		if rec.Header().Get("Content-Type") == "application/json" && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("JSON answer is not JSON: %q", rec.Body.Bytes())
		}
	})
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c == 0x7f {
			return false
		}
	}
	return true
}
