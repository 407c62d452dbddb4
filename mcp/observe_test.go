package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"winx/mcp"
)

// TestObserverRecordMatchesAnswer checks that the outcome a tool call
// record carries (isError, the envelope's status and errorCode) is what the
// encoded answer says, for every kind of result: the record takes it from
// the result before encoding, and a large answer is not decoded again.
func TestObserverRecordMatchesAnswer(t *testing.T) {
	big := strings.Repeat("a line of a large answer\n", 4000)
	results := map[string]func() (*mcp.CallToolResult, error){
		"text":       func() (*mcp.CallToolResult, error) { return mcp.TextResult("hi"), nil },
		"error text": func() (*mcp.CallToolResult, error) { return mcp.ErrorResult("no"), nil },
		"envelope": func() (*mcp.CallToolResult, error) {
			return mcp.Envelope{Status: mcp.StatusCompleted, Tool: "T"}.Result(big), nil
		},
		"envelope failed": func() (*mcp.CallToolResult, error) {
			return mcp.Envelope{Status: mcp.StatusFailed, Tool: "T", ErrorCode: "boom", Message: "m"}.Result("x"), nil
		},
		"envelope pointer": func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "p"}}, StructuredContent: &mcp.Envelope{Status: "odd", ErrorCode: "c\u00e9"}, IsError: true}, nil
		},
		"nil envelope pointer": func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: (*mcp.Envelope)(nil)}, nil
		},
		"invalid utf-8 code": func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: mcp.Envelope{Status: "s\xff", ErrorCode: "e\xfe"}, IsError: true}, nil
		},
		"map structured": func() (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"status": "from-map", "errorCode": "m"}}, nil
		},
		"protocol error": func() (*mcp.CallToolResult, error) { return nil, errors.New("handler failed") },
	}
	reg := mcp.NewRegistry()
	schema := json.RawMessage(`{"type":"object"}`)
	var names []string
	for name, res := range results {
		tool := strings.ReplaceAll(name, " ", "_")
		names = append(names, tool)
		reg.AddTool(mcp.Tool{Name: tool, Description: name, InputSchema: schema}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			return res()
		})
	}
	var mu sync.Mutex
	records := map[string]mcp.ToolCallRecord{}
	srv := mcp.NewServer(mcp.Implementation{Name: "t", Version: "1"}, reg, &mcp.ServerOptions{ToolObserver: func(r mcp.ToolCallRecord) {
		mu.Lock()
		defer mu.Unlock()
		records[r.Tool] = r
	}})
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			var lines []string
			meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			if era == "legacy" {
				meta = ""
				lines = append(lines, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for i, name := range names {
				lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s}}`, i+1, name, meta))
			}
			answers := serveLines(t, srv, mcp.Caller{}, lines...)
			for i, name := range names {
				answer := answers[fmt.Sprint(i+1)]
				mu.Lock()
				rec, ok := records[name]
				mu.Unlock()
				if !ok {
					t.Fatalf("%s: no record", name)
				}
				if _, failed := answer["error"]; failed {
					if !rec.ProtocolError {
						t.Errorf("%s: a JSON-RPC error, but the record says %+v", name, rec)
					}
					continue
				}
				var out struct {
					IsError    bool `json:"isError"`
					Structured struct {
						Status    string `json:"status"`
						ErrorCode string `json:"errorCode"`
					} `json:"structuredContent"`
				}
				if err := json.Unmarshal(answer["result"], &out); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if rec.ProtocolError || rec.IsError != out.IsError || rec.Status != out.Structured.Status || rec.ErrorCode != out.Structured.ErrorCode {
					t.Errorf("%s: record %v %q %q (protocol error %v), answer %v %q %q", name, rec.IsError, rec.Status, rec.ErrorCode, rec.ProtocolError,
						out.IsError, out.Structured.Status, out.Structured.ErrorCode)
				}
				if rec.ResponseBytes != len(answer["result"]) {
					t.Errorf("%s: record says %d bytes, the result has %d", name, rec.ResponseBytes, len(answer["result"]))
				}
			}
		})
	}
}
