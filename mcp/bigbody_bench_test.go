package mcp_test

// A large body's way from the request to its answer in the HTTP handler:
// the body read once, the message decoded, _meta, the routing headers and
// the param headers checked. The tool is unknown, so the numbers are the
// cost of reading the body, not of any tool: what one principal's large
// bodies cost the server's CPU before any limit of the tool applies.
//
//	go test ./mcp -run='^$' -bench=LargeBody -benchmem

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"winx/mcp"
)

func BenchmarkLargeBody(b *testing.B) {
	const size = 8 << 20
	bodies := []struct{ name, method, mcpName, params string }{
		{"discover", "server/discover", "", benchParams(benchModernMeta, `"pad":"`+strings.Repeat("x", size)+`"`)},
		{"tools_call", "tools/call", "nope", benchParams(benchModernMeta, `"name":"nope"`,
			`"arguments":{"pad":"`+strings.Repeat("x", size)+`"}`)},
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "bench", Version: "0"}, mcp.NewRegistry(), nil)
	h := mcp.NewHTTPHandler(srv, nil)
	for _, body := range bodies {
		b.Run(body.name+"/size="+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) {
			msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + body.method + `","params":` + body.params + `}`)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(msg))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("MCP-Protocol-Version", "2026-07-28")
				r.Header.Set("Mcp-Method", body.method)
				if body.mcpName != "" {
					r.Header.Set("Mcp-Name", body.mcpName)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code >= 500 || w.Code == http.StatusForbidden {
					b.Fatalf("status %d: %.200s", w.Code, w.Body.String())
				}
			}
		})
	}
}
