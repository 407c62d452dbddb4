package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"winx/mcp"
)

// serveLines runs a stdio server over the given request lines and returns
// the answers by id.
func serveLines(t *testing.T, srv *mcp.Server, caller mcp.Caller, lines ...string) map[string]map[string]json.RawMessage {
	t.Helper()
	var out bytes.Buffer
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	if err := srv.ServeStdio(context.Background(), in, &out, &mcp.StdioOptions{Caller: caller}); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	answers := map[string]map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		answers[string(m["id"])] = m
	}
	return answers
}

func echoRegistry() *mcp.Registry {
	reg := mcp.NewRegistry()
	echo := func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return mcp.TextResult(req.Name + ":" + string(req.Arguments)), nil
	}
	schema := json.RawMessage(`{"type":"object"}`)
	reg.AddTool(mcp.Tool{Name: "Alpha", Description: "a", InputSchema: schema}, echo)
	reg.AddTool(mcp.Tool{Name: "Beta", Description: "b", InputSchema: schema}, echo)
	reg.AddTool(mcp.Tool{Name: "LegacyAlias", Description: "alias", InputSchema: schema, Hidden: true}, echo)
	return reg
}

func TestProfileFiltersDiscoveryAndDispatch(t *testing.T) {
	srv := mcp.NewServer(mcp.Implementation{Name: "t", Version: "1"}, echoRegistry(), nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Beta","arguments":{},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Alpha","arguments":{"x":1},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"LegacyAlias","arguments":{},` + meta + `}}`,
	}
	tests := []struct {
		name       string
		profile    mcp.Profile
		wantListed []string
		wantScope  string
		wantBeta   bool
	}{
		{"full", mcp.FullProfile(), []string{"Alpha", "Beta"}, "public", true},
		{"allowlist", mcp.NewProfile("alpha-only", []string{"Alpha", "LegacyAlias"}), []string{"Alpha"}, "private", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := serveLines(t, srv, mcp.Caller{Profile: tc.profile}, lines...)
			var list struct {
				Tools      []struct{ Name string } `json:"tools"`
				CacheScope string                  `json:"cacheScope"`
			}
			if err := json.Unmarshal(got["1"]["result"], &list); err != nil {
				t.Fatalf("tools/list: %v (%s)", err, got["1"])
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantListed, ",") {
				t.Errorf("listed = %v, want %v (hidden aliases never listed)", names, tc.wantListed)
			}
			if list.CacheScope != tc.wantScope {
				t.Errorf("cacheScope = %q, want %q", list.CacheScope, tc.wantScope)
			}
			if _, denied := got["2"]["error"]; denied == tc.wantBeta {
				t.Errorf("calling Beta: denied=%v, want denied=%v (%s)", denied, !tc.wantBeta, got["2"])
			}
			if !strings.Contains(string(got["3"]["result"]), `Alpha:{\"x\":1}`) {
				t.Errorf("calling Alpha = %s, want its echo", got["3"])
			}
			if !strings.Contains(string(got["4"]["result"]), `LegacyAlias:{}`) {
				t.Errorf("calling the hidden alias = %s, want its echo", got["4"])
			}
		})
	}
}

func TestProfileValidateRejectsUnknownTools(t *testing.T) {
	reg := echoRegistry()
	if err := mcp.NewProfile("ok", []string{"Alpha"}).Validate(reg); err != nil {
		t.Errorf("Validate(Alpha) = %v, want nil", err)
	}
	if err := mcp.NewProfile("bad", []string{"alpha"}).Validate(reg); err == nil {
		t.Errorf("Validate(alpha) = nil, want an error: names are case-sensitive")
	}
}
