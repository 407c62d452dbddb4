package mcp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"winx/mcp"
)

// modernResult holds the fields every 2026-07-28 result shares.
type modernResult struct {
	ResultType string                     `json:"resultType"`
	TTLMs      *int64                     `json:"ttlMs"`
	CacheScope string                     `json:"cacheScope"`
	Meta       map[string]json.RawMessage `json:"_meta"`
}

func checkModernResult(t *testing.T, what string, raw json.RawMessage, cacheable bool) {
	t.Helper()
	var r modernResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s result %s: %v", what, raw, err)
	}
	if r.ResultType != mcp.ResultComplete {
		t.Errorf("%s resultType = %q, want %q", what, r.ResultType, mcp.ResultComplete)
	}
	if what == "tools/call" {
		// A tool's answer leaves serverInfo out: the model pays for it
		// on every call and the client has it from discovery.
		if _, ok := r.Meta[mcp.MetaServerInfo]; ok {
			t.Errorf("%s _meta = %v, want no serverInfo", what, r.Meta)
		}
		return
	}
	var info mcp.Implementation
	if err := json.Unmarshal(r.Meta[mcp.MetaServerInfo], &info); err != nil || info.Name != streamServerInfo.Name || info.Version != streamServerInfo.Version {
		t.Errorf("%s _meta serverInfo = %s, want %+v", what, r.Meta[mcp.MetaServerInfo], streamServerInfo)
	}
	if !cacheable {
		return
	}
	if r.TTLMs == nil || *r.TTLMs != 5000 {
		t.Errorf("%s ttlMs = %v, want 5000", what, r.TTLMs)
	}
	if r.CacheScope != mcp.CacheScopePublic {
		t.Errorf("%s cacheScope = %q, want %q (full catalog)", what, r.CacheScope, mcp.CacheScopePublic)
	}
}

func TestModernDiscover(t *testing.T) {
	f := newStreamFixture(t, nil)
	resp, body := f.do(t, http.MethodPost, modernHeader("server/discover", ""), rpcBody(t, 1, "server/discover", withModernMeta(nil)))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("server/discover status = %d (%q), want 200", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("server/discover Content-Type = %q, want application/json", ct)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("server/discover Mcp-Session-Id = %q, want none (stateless)", sid)
	}
	m := decodeRPC(t, body)
	if m.Error != nil {
		t.Fatalf("server/discover error = %+v", m.Error)
	}
	checkModernResult(t, "server/discover", m.Result, true)
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Instructions      string                     `json:"instructions"`
	}
	if err := json.Unmarshal(m.Result, &d); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{mcp.Version20260728, mcp.Version20251125, mcp.Version20250326} {
		if !slices.Contains(d.SupportedVersions, v) {
			t.Errorf("server/discover supportedVersions = %v, want it to contain %s", d.SupportedVersions, v)
		}
	}
	for _, c := range []string{"tools", "resources", "prompts"} {
		if _, ok := d.Capabilities[c]; !ok {
			t.Errorf("server/discover capabilities = %v, want %q", d.Capabilities, c)
		}
	}
	if d.Instructions != streamInstructions {
		t.Errorf("server/discover instructions = %q, want %q", d.Instructions, streamInstructions)
	}
}

func TestModernRequests(t *testing.T) {
	f := newStreamFixture(t, nil)
	tests := []struct {
		name      string
		method    string
		mcpName   string // Mcp-Name header as sent
		params    map[string]any
		cacheable bool
		check     func(t *testing.T, result json.RawMessage)
	}{
		{
			name: "tools/list", method: "tools/list", cacheable: true,
			check: func(t *testing.T, res json.RawMessage) {
				var r struct {
					Tools []mcp.Tool `json:"tools"`
				}
				if err := json.Unmarshal(res, &r); err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tool := range r.Tools {
					names = append(names, tool.Name)
				}
				if !slices.Equal(names, []string{"echo", "count"}) {
					t.Errorf("tools/list names = %v, want [echo count]", names)
				}
			},
		},
		{
			name: "tools/call", method: "tools/call", mcpName: "echo",
			params: map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi there"}},
			check:  wantToolText("hi there"),
		},
		{
			name: "tools/call base64 Mcp-Name", method: "tools/call", mcpName: b64Name("echo"),
			params: map[string]any{"name": "echo", "arguments": map[string]any{"text": "wrapped"}},
			check:  wantToolText("wrapped"),
		},
		{
			name: "resources/list", method: "resources/list", cacheable: true,
			check: func(t *testing.T, res json.RawMessage) {
				var r struct {
					Resources []mcp.Resource `json:"resources"`
				}
				if err := json.Unmarshal(res, &r); err != nil {
					t.Fatal(err)
				}
				if len(r.Resources) != 2 {
					t.Errorf("resources/list = %s, want 2 resources", res)
				}
			},
		},
		{
			name: "resources/read", method: "resources/read", mcpName: "test://static", cacheable: true,
			params: map[string]any{"uri": "test://static"},
			check:  wantResourceText("contents of test://static"),
		},
		{
			name: "resources/read non-ASCII uri base64 Mcp-Name", method: "resources/read", mcpName: b64Name(unicodeURI), cacheable: true,
			params: map[string]any{"uri": unicodeURI},
			check:  wantResourceText("contents of " + unicodeURI),
		},
		{
			name: "prompts/list", method: "prompts/list", cacheable: true,
			check: func(t *testing.T, res json.RawMessage) {
				if !strings.Contains(string(res), `"greet"`) {
					t.Errorf("prompts/list = %s, want greet", res)
				}
			},
		},
		{
			name: "prompts/get", method: "prompts/get", mcpName: "greet",
			params: map[string]any{"name": "greet", "arguments": map[string]any{"who": "world"}},
			check: func(t *testing.T, res json.RawMessage) {
				if !strings.Contains(string(res), "hello world") {
					t.Errorf("prompts/get = %s, want hello world", res)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, http.MethodPost, modernHeader(tt.method, tt.mcpName), rpcBody(t, 1, tt.method, withModernMeta(tt.params)))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s status = %d (%q), want 200", tt.method, resp.StatusCode, body)
			}
			m := decodeRPC(t, body)
			if m.Error != nil {
				t.Fatalf("%s error = %+v, want a result", tt.method, m.Error)
			}
			checkModernResult(t, tt.method, m.Result, tt.cacheable)
			tt.check(t, m.Result)
		})
	}
}

func wantToolText(want string) func(t *testing.T, res json.RawMessage) {
	return func(t *testing.T, res json.RawMessage) {
		t.Helper()
		var r struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != want {
			t.Errorf("tools/call result = %s, want one text block %q", res, want)
		}
	}
}

func wantResourceText(want string) func(t *testing.T, res json.RawMessage) {
	return func(t *testing.T, res json.RawMessage) {
		t.Helper()
		var r struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Contents) != 1 || r.Contents[0].Text != want {
			t.Errorf("resources/read result = %s, want text %q", res, want)
		}
	}
}

func TestModernErrors(t *testing.T) {
	f := newStreamFixture(t, nil)
	echoParams := map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}
	tests := []struct {
		name       string
		header     http.Header
		body       string
		wantStatus int
		wantCode   int64
		wantID     string // raw JSON id of the error response
	}{
		{
			name:   "missing MCP-Protocol-Version",
			header: hdrWithout(modernHeader("server/discover", ""), "MCP-Protocol-Version"),
			body:   rpcBody(t, 1, "server/discover", withModernMeta(nil)),
			// A 2025-03-26 client without an Mcp-Session-Id would get 400 too.
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "missing _meta",
			header:     modernHeader("server/discover", ""),
			body:       rpcBody(t, 1, "server/discover", nil),
			wantStatus: http.StatusBadRequest, wantCode: -32602, wantID: "1",
		},
		{
			name:       "_meta without clientCapabilities",
			header:     modernHeader("server/discover", ""),
			body:       rpcBody(t, 1, "server/discover", map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: mcp.Version20260728}}),
			wantStatus: http.StatusBadRequest, wantCode: -32602, wantID: "1",
		},
		{
			name:       "header differs from _meta",
			header:     modernHeader("server/discover", ""),
			body:       rpcBody(t, 1, "server/discover", map[string]any{"_meta": metaFor("2099-01-01")}),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "_meta differs from header",
			header:     hdrWith(modernHeader("server/discover", ""), "MCP-Protocol-Version", "2099-01-01"),
			body:       rpcBody(t, 1, "server/discover", withModernMeta(nil)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "unsupported version in header and _meta",
			header:     hdrWith(modernHeader("server/discover", ""), "MCP-Protocol-Version", "2099-01-01"),
			body:       rpcBody(t, 1, "server/discover", map[string]any{"_meta": metaFor("2099-01-01")}),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeUnsupportedProtocolVersion, wantID: "1",
		},
		{
			name:       "Mcp-Method mismatch",
			header:     modernHeader("tools/list", ""),
			body:       rpcBody(t, 1, "server/discover", withModernMeta(nil)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "Mcp-Method missing",
			header:     hdrWithout(modernHeader("server/discover", ""), "Mcp-Method"),
			body:       rpcBody(t, 1, "server/discover", withModernMeta(nil)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "Mcp-Method differs in case",
			header:     modernHeader("Server/Discover", ""),
			body:       rpcBody(t, 1, "server/discover", withModernMeta(nil)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "Mcp-Name mismatch on tools/call",
			header:     modernHeader("tools/call", "count"),
			body:       rpcBody(t, 1, "tools/call", withModernMeta(echoParams)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "Mcp-Name missing on tools/call",
			header:     modernHeader("tools/call", ""),
			body:       rpcBody(t, 1, "tools/call", withModernMeta(echoParams)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "base64 Mcp-Name of another tool",
			header:     modernHeader("tools/call", b64Name("count")),
			body:       rpcBody(t, 1, "tools/call", withModernMeta(echoParams)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "malformed base64 Mcp-Name",
			header:     modernHeader("tools/call", "=?base64?!!!?="),
			body:       rpcBody(t, 1, "tools/call", withModernMeta(echoParams)),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "Mcp-Name mismatch on resources/read",
			header:     modernHeader("resources/read", "test://other"),
			body:       rpcBody(t, 1, "resources/read", withModernMeta(map[string]any{"uri": "test://static"})),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "Mcp-Name mismatch on prompts/get",
			header:     modernHeader("prompts/get", "other"),
			body:       rpcBody(t, 1, "prompts/get", withModernMeta(map[string]any{"name": "greet", "arguments": map[string]any{"who": "x"}})),
			wantStatus: http.StatusBadRequest, wantCode: mcp.CodeHeaderMismatch, wantID: "1",
		},
		{
			name:       "unknown method",
			header:     modernHeader("foo/bar", ""),
			body:       rpcBody(t, 1, "foo/bar", withModernMeta(nil)),
			wantStatus: http.StatusNotFound, wantCode: -32601, wantID: "1",
		},
		{
			name:       "ping is legacy only",
			header:     modernHeader("ping", ""),
			body:       rpcBody(t, 1, "ping", withModernMeta(nil)),
			wantStatus: http.StatusNotFound, wantCode: -32601, wantID: "1",
		},
		{
			name:       "logging/setLevel is legacy only",
			header:     modernHeader("logging/setLevel", ""),
			body:       rpcBody(t, 1, "logging/setLevel", withModernMeta(map[string]any{"level": "debug"})),
			wantStatus: http.StatusNotFound, wantCode: -32601, wantID: "1",
		},
		{
			name:   "initialize is legacy only",
			header: modernHeader("initialize", ""),
			body: rpcBody(t, 1, "initialize", withModernMeta(map[string]any{
				"protocolVersion": mcp.Version20260728, "capabilities": map[string]any{},
			})),
			wantStatus: http.StatusNotFound, wantCode: -32601, wantID: "1",
		},
		{
			name:       "resources/subscribe is legacy only",
			header:     modernHeader("resources/subscribe", ""),
			body:       rpcBody(t, 1, "resources/subscribe", withModernMeta(map[string]any{"uri": "test://static"})),
			wantStatus: http.StatusNotFound, wantCode: -32601, wantID: "1",
		},
		{
			name:       "batch",
			header:     modernHeader("server/discover", ""),
			body:       "[" + rpcBody(t, 1, "server/discover", withModernMeta(nil)) + "]",
			wantStatus: http.StatusBadRequest, wantCode: -32600, wantID: "null",
		},
		{
			name:       "invalid JSON",
			header:     modernHeader("server/discover", ""),
			body:       `{"jsonrpc":"2.0","id":1,"method":`,
			wantStatus: http.StatusBadRequest, wantCode: -32700, wantID: "null",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, http.MethodPost, tt.header, tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("POST status = %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("POST Content-Type = %q, want application/json", ct)
			}
			m := decodeRPC(t, body)
			if m.Error == nil {
				t.Fatalf("POST = %s, want error %d", body, tt.wantCode)
			}
			if m.Error.Code != tt.wantCode {
				t.Errorf("POST error code = %d (%s), want %d", m.Error.Code, m.Error.Message, tt.wantCode)
			}
			if string(m.ID) != tt.wantID {
				t.Errorf("POST error id = %s, want %s", m.ID, tt.wantID)
			}
			if len(m.Result) != 0 {
				t.Errorf("POST = %s, want no result beside the error", body)
			}
		})
	}
}

func hdrWith(h http.Header, key, value string) http.Header {
	h.Set(key, value)
	return h
}

func hdrWithout(h http.Header, key string) http.Header {
	h.Del(key)
	return h
}

func TestModernUnsupportedVersionData(t *testing.T) {
	f := newStreamFixture(t, nil)
	h := hdrWith(modernHeader("server/discover", ""), "MCP-Protocol-Version", "2099-01-01")
	resp, body := f.do(t, http.MethodPost, h, rpcBody(t, 1, "server/discover", map[string]any{"_meta": metaFor("2099-01-01")}))
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status = %d (%q), want 400", resp.StatusCode, body)
	}
	m := decodeRPC(t, body)
	if m.Error == nil || m.Error.Code != mcp.CodeUnsupportedProtocolVersion {
		t.Fatalf("answer = %s, want error %d", body, mcp.CodeUnsupportedProtocolVersion)
	}
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if err := json.Unmarshal(m.Error.Data, &data); err != nil {
		t.Fatalf("error data %s: %v", m.Error.Data, err)
	}
	if data.Requested != "2099-01-01" {
		t.Errorf("error data.requested = %q, want 2099-01-01", data.Requested)
	}
	if !slices.Equal(data.Supported, mcp.SupportedVersions()) {
		t.Errorf("error data.supported = %v, want %v", data.Supported, mcp.SupportedVersions())
	}
}

func TestModernIDEcho(t *testing.T) {
	f := newStreamFixture(t, nil)
	meta, err := json.Marshal(withModernMeta(nil))
	if err != nil {
		t.Fatal(err)
	}
	// Each id is sent as raw JSON text and must come back byte for byte.
	tests := []struct {
		name string
		id   string
	}{
		{"string", `"abc"`},
		{"number", `7`},
		{"zero", `0`},
		{"negative", `-12`},
		{"numeric string", `"7"`},
		{"escapes kept as sent", `"a\"b\u003cc>"`},
		{"large integer", `9007199254740993`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"server/discover", "foo/bar"} {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, tt.id, method, meta)
				resp, got := f.do(t, http.MethodPost, modernHeader(method, ""), body)
				m := decodeRPC(t, got)
				if string(m.ID) != tt.id {
					t.Errorf("%s id %s answered with id %s (status %d), want %s", method, tt.id, m.ID, resp.StatusCode, tt.id)
				}
			}
		})
	}
}

func TestModernNotification(t *testing.T) {
	f := newStreamFixture(t, nil)
	tests := []struct {
		name   string
		method string
	}{
		{"cancelled", "notifications/cancelled"},
		{"roots changed", "notifications/roots/list_changed"},
		{"unknown", "notifications/whatever"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := withModernMeta(nil)
			if tt.method == "notifications/cancelled" {
				params["requestId"] = 99
			}
			resp, body := f.do(t, http.MethodPost, modernHeader(tt.method, ""), rpcBody(t, nil, tt.method, params))
			if resp.StatusCode != http.StatusAccepted {
				t.Errorf("POST %s status = %d, want 202", tt.method, resp.StatusCode)
			}
			if len(body) != 0 {
				t.Errorf("POST %s body = %q, want empty", tt.method, body)
			}
		})
	}
}

// TestModernNotificationHeaders: the 2026-07-28 header rules cover every
// POST, notifications included, and a modern POST ignores Mcp-Session-Id.
func TestModernNotificationHeaders(t *testing.T) {
	f := newStreamFixture(t, nil)
	const method = "notifications/cancelled"
	tests := []struct {
		name       string
		header     http.Header
		wantStatus int
	}{
		{"headers match", modernHeader(method, ""), http.StatusAccepted},
		{"Mcp-Method mismatch", modernHeader("tools/list", ""), http.StatusBadRequest},
		{"Mcp-Method missing", hdrWithout(modernHeader(method, ""), "Mcp-Method"), http.StatusBadRequest},
		{"stray Mcp-Session-Id", hdrWith(modernHeader(method, ""), "Mcp-Session-Id", "no-such-session"), http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := rpcBody(t, nil, method, withModernMeta(map[string]any{"requestId": 1}))
			resp, got := f.do(t, http.MethodPost, tt.header, body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("BUG: POST %s notification status = %d (%q), want %d", tt.name, resp.StatusCode, got, tt.wantStatus)
			}
		})
	}
}

func TestModernGetDeleteNotAllowed(t *testing.T) {
	f := newStreamFixture(t, nil)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		h := modernHeader("server/discover", "")
		h.Set("Accept", "text/event-stream")
		resp, body := f.do(t, method, h, "")
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s without Mcp-Session-Id status = %d (%q), want 405", method, resp.StatusCode, body)
		}
		if allow := resp.Header.Get("Allow"); !strings.Contains(allow, "POST") {
			t.Errorf("%s without Mcp-Session-Id Allow = %q, want POST", method, allow)
		}
	}
}

func TestModernIgnoresSessionID(t *testing.T) {
	f := newStreamFixture(t, nil)
	h := hdrWith(modernHeader("server/discover", ""), "Mcp-Session-Id", "no-such-session")
	resp, body := f.do(t, http.MethodPost, h, rpcBody(t, 1, "server/discover", withModernMeta(nil)))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("server/discover with a stray Mcp-Session-Id status = %d (%q), want 200", resp.StatusCode, body)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("server/discover echoed Mcp-Session-Id %q, want none", sid)
	}
}

// checkProgressStream checks an SSE answer: progress 1..3 for token, then the
// response with id and the text "counted".
func checkProgressStream(t *testing.T, resp *http.Response, body []byte, token string, id string) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d (%q), want 200", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream (body %q)", ct, body)
	}
	if xab := resp.Header.Get("X-Accel-Buffering"); xab != "no" {
		t.Errorf("X-Accel-Buffering = %q, want no", xab)
	}
	events := readSSE(t, body)
	if len(events) != 4 {
		t.Fatalf("SSE events = %d (%q), want 3 progress + 1 response", len(events), body)
	}
	for i, ev := range events[:3] {
		if ev.Method != "notifications/progress" || len(ev.ID) != 0 {
			t.Errorf("event %d = method %q id %s, want notifications/progress without id", i, ev.Method, ev.ID)
			continue
		}
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Progress      float64         `json:"progress"`
			Total         float64         `json:"total"`
		}
		if err := json.Unmarshal(ev.Params, &p); err != nil {
			t.Fatal(err)
		}
		if string(p.ProgressToken) != token || p.Progress != float64(i+1) || p.Total != 3 {
			t.Errorf("event %d params = %s, want token %s progress %d of 3", i, ev.Params, token, i+1)
		}
	}
	last := events[3]
	if string(last.ID) != id || last.Error != nil {
		t.Fatalf("last event = id %s error %+v, want the response to id %s", last.ID, last.Error, id)
	}
	wantToolText("counted")(t, last.Result)
}

func TestModernProgressStream(t *testing.T) {
	f := newStreamFixture(t, nil)
	params := withModernMeta(map[string]any{"name": "count", "arguments": map[string]any{}})
	params["_meta"].(map[string]any)["progressToken"] = "tok-1"
	resp, body := f.do(t, http.MethodPost, modernHeader("tools/call", "count"), rpcBody(t, "call-5", "tools/call", params))
	checkProgressStream(t, resp, body, `"tok-1"`, `"call-5"`)
	var last modernResult
	events := readSSE(t, body)
	if len(events) == 4 {
		if err := json.Unmarshal(events[3].Result, &last); err != nil {
			t.Fatal(err)
		}
		if last.ResultType != mcp.ResultComplete {
			t.Errorf("streamed result resultType = %q, want complete", last.ResultType)
		}
	}
}

func TestModernProgressFallsBackToJSON(t *testing.T) {
	f := newStreamFixture(t, nil)
	tests := []struct {
		name   string
		accept string
		token  bool
	}{
		{"client takes JSON only", "application/json", true},
		{"no progress token", "application/json, text/event-stream", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := withModernMeta(map[string]any{"name": "count"})
			if tt.token {
				params["_meta"].(map[string]any)["progressToken"] = 1
			}
			h := hdrWith(modernHeader("tools/call", "count"), "Accept", tt.accept)
			resp, body := f.do(t, http.MethodPost, h, rpcBody(t, 2, "tools/call", params))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d (%q), want 200", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q, want application/json", ct)
			}
			m := decodeRPC(t, body)
			if m.Error != nil {
				t.Fatalf("error = %+v, want result", m.Error)
			}
			wantToolText("counted")(t, m.Result)
		})
	}
}
