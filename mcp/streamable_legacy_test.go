package mcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"winx/mcp"
)

// initialize opens a legacy connection and returns its Mcp-Session-Id and
// negotiated version.
func (f *streamFixture) initialize(t *testing.T, version string) (string, string) {
	t.Helper()
	resp, body := f.do(t, http.MethodPost, legacyHeader("", ""), rpcBody(t, 0, "initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "legacy-client", "version": "1"},
	}))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize(%s) status = %d (%q), want 200", version, resp.StatusCode, body)
	}
	m := decodeRPC(t, body)
	if m.Error != nil {
		t.Fatalf("initialize(%s) error = %+v", version, m.Error)
	}
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		ServerInfo      mcp.Implementation         `json:"serverInfo"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ResultType      *string                    `json:"resultType"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.ServerInfo.Name != streamServerInfo.Name {
		t.Errorf("initialize(%s) serverInfo = %+v, want %+v", version, r.ServerInfo, streamServerInfo)
	}
	if _, ok := r.Capabilities["tools"]; !ok {
		t.Errorf("initialize(%s) capabilities = %v, want tools", version, r.Capabilities)
	}
	if r.ResultType != nil {
		t.Errorf("initialize(%s) resultType = %q, want absent in legacy", version, *r.ResultType)
	}
	return resp.Header.Get("Mcp-Session-Id"), r.ProtocolVersion
}

func isVisibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

func TestLegacyInitializeNegotiates(t *testing.T) {
	f := newStreamFixture(t, nil)
	tests := []struct {
		requested string
		want      string
	}{
		{mcp.Version20251125, mcp.Version20251125},
		{mcp.Version20250618, mcp.Version20250618},
		{mcp.Version20250326, mcp.Version20250326},
		{mcp.Version20241105, mcp.Version20241105},
		{"1999-01-01", mcp.Version20251125},
		{"2099-12-31", mcp.Version20251125},
		{mcp.Version20260728, mcp.Version20251125},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.requested, func(t *testing.T) {
			sid, got := f.initialize(t, tt.requested)
			if got != tt.want {
				t.Errorf("initialize(%s) protocolVersion = %s, want %s", tt.requested, got, tt.want)
			}
			if !isVisibleASCII(sid) || len(sid) < 16 {
				t.Errorf("initialize(%s) Mcp-Session-Id = %q, want at least 16 visible ASCII bytes", tt.requested, sid)
			}
			if seen[sid] {
				t.Errorf("initialize(%s) Mcp-Session-Id %q was already handed out", tt.requested, sid)
			}
			seen[sid] = true
		})
	}
}

func TestLegacyInitializeWithoutVersion(t *testing.T) {
	f := newStreamFixture(t, nil)
	resp, body := f.do(t, http.MethodPost, legacyHeader("", ""), rpcBody(t, 1, "initialize", map[string]any{"capabilities": map[string]any{}}))
	m := decodeRPC(t, body)
	if m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("initialize without protocolVersion = %d %s, want error -32602", resp.StatusCode, body)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("failed initialize minted Mcp-Session-Id %q", sid)
	}
}

func TestLegacyConnection(t *testing.T) {
	tests := []struct {
		name      string
		version   string // requested in initialize
		useHeader bool   // send MCP-Protocol-Version (2025-06-18 onwards)
	}{
		{"2025-11-25", mcp.Version20251125, true},
		{"2025-03-26", mcp.Version20250326, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newStreamFixture(t, nil)
			sid, version := f.initialize(t, tt.version)
			if version != tt.version {
				t.Fatalf("initialize(%s) protocolVersion = %s", tt.version, version)
			}
			hv := ""
			if tt.useHeader {
				hv = version
			}
			hdr := func() http.Header { return legacyHeader(hv, sid) }

			resp, body := f.do(t, http.MethodPost, hdr(), rpcBody(t, nil, "notifications/initialized", nil))
			if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
				t.Errorf("notifications/initialized = %d %q, want 202 and no body", resp.StatusCode, body)
			}

			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, "p1", "ping", nil))
			m := decodeRPC(t, body)
			if resp.StatusCode != http.StatusOK || string(m.ID) != `"p1"` || string(m.Result) != "{}" {
				t.Errorf("ping = %d %s, want 200 with result {} and id \"p1\"", resp.StatusCode, body)
			}

			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 2, "tools/list", nil))
			m = decodeRPC(t, body)
			if resp.StatusCode != http.StatusOK || m.Error != nil {
				t.Fatalf("tools/list = %d %s, want 200 with a result", resp.StatusCode, body)
			}
			var tl map[string]json.RawMessage
			if err := json.Unmarshal(m.Result, &tl); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(tl["tools"]), `"echo"`) {
				t.Errorf("tools/list tools = %s, want echo", tl["tools"])
			}
			for _, modernOnly := range []string{"resultType", "ttlMs", "cacheScope"} {
				if _, ok := tl[modernOnly]; ok {
					t.Errorf("legacy tools/list carries %q: %s", modernOnly, m.Result)
				}
			}

			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 3, "logging/setLevel", map[string]any{"level": "info"}))
			if m := decodeRPC(t, body); resp.StatusCode != http.StatusOK || m.Error != nil {
				t.Errorf("logging/setLevel = %d %s, want 200 with a result", resp.StatusCode, body)
			}

			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 4, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "legacy"}}))
			m = decodeRPC(t, body)
			if resp.StatusCode != http.StatusOK || m.Error != nil {
				t.Fatalf("tools/call = %d %s, want 200 with a result", resp.StatusCode, body)
			}
			wantToolText("legacy")(t, m.Result)

			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 5, "tools/call", map[string]any{
				"name": "count", "_meta": map[string]any{"progressToken": 42},
			}))
			checkProgressStream(t, resp, body, `42`, `5`)

			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 6, "server/discover", nil))
			if m := decodeRPC(t, body); m.Error == nil || m.Error.Code != -32601 {
				t.Errorf("server/discover on a legacy connection = %d %s, want -32601", resp.StatusCode, body)
			}

			// initialize always opens a new legacy connection, even sent on one.
			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 7, "initialize", map[string]any{"protocolVersion": version}))
			if other := resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || other == "" || other == sid {
				t.Errorf("initialize on a legacy connection = %d %q (Mcp-Session-Id %q), want 200 with a new one", resp.StatusCode, body, other)
			}

			resp, _ = f.do(t, http.MethodDelete, hdr(), "")
			if resp.StatusCode != http.StatusNoContent {
				t.Errorf("DELETE legacy connection status = %d, want 204", resp.StatusCode)
			}
			resp, body = f.do(t, http.MethodPost, hdr(), rpcBody(t, 8, "ping", nil))
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("ping after DELETE status = %d (%q), want 404", resp.StatusCode, body)
			}
			resp, _ = f.do(t, http.MethodDelete, hdr(), "")
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("second DELETE status = %d, want 404", resp.StatusCode)
			}
		})
	}
}

func TestLegacyErrors(t *testing.T) {
	f := newStreamFixture(t, nil)
	sid, _ := f.initialize(t, mcp.Version20251125)
	tests := []struct {
		name       string
		header     http.Header
		wantStatus int
	}{
		{"no Mcp-Session-Id", legacyHeader(mcp.Version20251125, ""), http.StatusBadRequest},
		{"no Mcp-Session-Id 2025-06-18", legacyHeader(mcp.Version20250618, ""), http.StatusBadRequest},
		{"no Mcp-Session-Id no version", legacyHeader("", ""), http.StatusBadRequest},
		{"unknown session id", legacyHeader(mcp.Version20251125, "no-such-session"), http.StatusNotFound},
		{"unknown session id no version", legacyHeader("", "no-such-session"), http.StatusNotFound},
		{"invalid protocol version", legacyHeader("1999-01-01", sid), http.StatusBadRequest},
		{"garbage protocol version", legacyHeader("latest", sid), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, http.MethodPost, tt.header, rpcBody(t, 1, "tools/list", nil))
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("tools/list status = %d (%q), want %d", resp.StatusCode, body, tt.wantStatus)
			}
		})
	}
	// The legacy connection is still alive after the failures above.
	resp, body := f.do(t, http.MethodPost, legacyHeader(mcp.Version20251125, sid), rpcBody(t, 1, "ping", nil))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("ping on the good legacy connection status = %d (%q), want 200", resp.StatusCode, body)
	}
}

func TestLegacyGetStream(t *testing.T) {
	f := newStreamFixture(t, nil)
	sid, _ := f.initialize(t, mcp.Version20251125)

	open := func(t *testing.T, id, accept string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, f.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = legacyHeader(mcp.Version20251125, id)
		req.Header.Set("Accept", accept)
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		return resp
	}

	// An unknown Mcp-Session-Id and a client that takes no stream are refused.
	resp := open(t, "no-such-session", "text/event-stream")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET unknown Mcp-Session-Id status = %d, want 404", resp.StatusCode)
	}
	resp = open(t, sid, "application/json")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("GET accepting only JSON status = %d, want 406", resp.StatusCode)
	}

	resp = open(t, sid, "text/event-stream")
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET with Mcp-Session-Id status = %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("GET with Mcp-Session-Id Content-Type = %q, want text/event-stream", ct)
	}
	// One stream per legacy connection: a second GET while the first is open is refused.
	second := open(t, sid, "text/event-stream")
	second.Body.Close()
	if second.StatusCode != http.StatusConflict {
		t.Errorf("second GET while one is open status = %d, want 409", second.StatusCode)
	}
	resp.Body.Close()
}

func TestLegacyMaxSessions(t *testing.T) {
	f := newStreamFixture(t, &mcp.HTTPOptions{MaxSessions: 2})
	first, _ := f.initialize(t, mcp.Version20251125)
	f.initialize(t, mcp.Version20251125)

	body := rpcBody(t, 9, "initialize", map[string]any{"protocolVersion": mcp.Version20251125})
	resp, got := f.do(t, http.MethodPost, legacyHeader("", ""), body)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("initialize over MaxSessions status = %d (%q), want 503", resp.StatusCode, got)
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" {
		t.Errorf("initialize over MaxSessions has no Retry-After")
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("initialize over MaxSessions minted Mcp-Session-Id %q", sid)
	}

	// Ending a legacy connection frees its slot.
	if resp, _ := f.do(t, http.MethodDelete, legacyHeader(mcp.Version20251125, first), ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE status = %d, want 204", resp.StatusCode)
	}
	resp, got = f.do(t, http.MethodPost, legacyHeader("", ""), body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize after DELETE = %d %q, want 200 with an Mcp-Session-Id", resp.StatusCode, got)
	}
}

// TestLegacyConnIdleExpiry drives the handler directly inside a synctest
// bubble, so SessionIdle can pass without waiting.
func TestLegacyConnIdleExpiry(t *testing.T) {
	const idle = time.Minute
	tests := []struct {
		name string
		// otherClient makes another client initialize once the legacy
		// connection has been idle too long, before it is used again.
		otherClient bool
	}{
		{"used again after idle", false},
		{"used again after idle and another initialize", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := mcp.NewServer(streamServerInfo, streamRegistry(), nil)
				h := mcp.NewHTTPHandler(srv, &mcp.HTTPOptions{Auth: streamAuth{}, SessionIdle: idle})
				serve := func(method string, hdr http.Header, body string) *httptest.ResponseRecorder {
					req := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
					req.Header = hdr
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					return rec
				}
				initBody := rpcBody(t, 1, "initialize", map[string]any{"protocolVersion": mcp.Version20251125})
				rec := serve(http.MethodPost, legacyHeader("", ""), initBody)
				sid := rec.Header().Get("Mcp-Session-Id")
				if rec.Code != http.StatusOK || sid == "" {
					t.Fatalf("initialize = %d %q, want 200 with an Mcp-Session-Id", rec.Code, rec.Body)
				}
				ping := func() int {
					return serve(http.MethodPost, legacyHeader(mcp.Version20251125, sid), rpcBody(t, 2, "ping", nil)).Code
				}

				// Use within the window keeps the legacy connection alive, however
				// long it has existed.
				for range 3 {
					time.Sleep(idle * 3 / 4)
					if got := ping(); got != http.StatusOK {
						t.Fatalf("ping %v after the last use = %d, want 200", idle*3/4, got)
					}
				}

				time.Sleep(idle + time.Second)
				if tt.otherClient {
					serve(http.MethodPost, legacyHeader("", ""), initBody)
				}
				if got := ping(); got != http.StatusNotFound {
					t.Errorf("BUG: ping %v after the last use (SessionIdle %v) = %d, want 404: the session should have ended", idle+time.Second, idle, got)
				}
			})
		})
	}
}
