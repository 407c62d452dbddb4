package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// initialize opens a legacy connection only when the request does not name the
// stateless era; a 2026-07-28 initialize is a removed method (-32601).
func TestStdioInitializeEra(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantCode int64 // 0: a result
	}{
		{
			name: "legacy",
			line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		},
		{
			name: "modern _meta",
			line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			wantCode: -32601,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(Implementation{Name: "t", Version: "1"}, NewRegistry(), nil)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var out bytes.Buffer
			if err := srv.ServeStdio(ctx, strings.NewReader(tt.line+"\n"), &out, nil); err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
				t.Fatalf("output %q: %v", out.Bytes(), err)
			}
			var got int64
			if resp.Error != nil {
				got = resp.Error.Code
			}
			if got != tt.wantCode {
				t.Errorf("initialize (%s) = %s, want error code %d", tt.name, out.Bytes(), tt.wantCode)
			}
		})
	}
}
