package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"winx/mcp"
)

// streamToken is the only bearer token the fixture accepts.
const streamToken = "streamable-test-token-0123456789abcdef"

// streamAuth admits requests carrying exactly "Bearer <streamToken>".
type streamAuth struct{}

var _ mcp.Authenticator = streamAuth{}

func (streamAuth) Authenticate(r *http.Request) (mcp.Caller, error) {
	if r.Header.Get("Authorization") != "Bearer "+streamToken {
		return mcp.Caller{}, mcp.ErrUnauthorized
	}
	return mcp.Caller{Profile: mcp.FullProfile()}, nil
}

// unicodeURI is a resource whose URI is not ASCII, so Mcp-Name must carry it
// base64-wrapped.
const unicodeURI = "test://docs/résumé"

var streamServerInfo = mcp.Implementation{Name: "streamable-test", Version: "0.0.1"}

const streamInstructions = "test instructions"

// streamRegistry is the fixture catalog: a tool that echoes, a tool that
// reports progress, two resources and a prompt.
func streamRegistry() *mcp.Registry {
	reg := mcp.NewRegistry()
	reg.AddTool(mcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return mcp.ErrorResult("arguments must be {text}"), nil
		}
		return mcp.TextResult(args.Text), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "count",
		Description: "Counts to three, reporting progress.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		total := 3.0
		for i := 1; i <= 3; i++ {
			// A client that takes no stream gets no progress; the
			// call itself still succeeds.
			_ = req.Progress(float64(i), &total, fmt.Sprintf("step %d", i))
		}
		return mcp.TextResult("counted"), nil
	})
	for _, uri := range []string{"test://static", unicodeURI} {
		reg.AddResource(mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
			func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
					mcp.TextResource(req.URI, "text/plain", "contents of "+req.URI),
				}}, nil
			})
	}
	reg.AddPrompt(mcp.Prompt{
		Name:      "greet",
		Arguments: []mcp.PromptArgument{{Name: "who", Required: true}},
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{
			Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Arguments["who"]},
		}}}, nil
	}, nil)
	return reg
}

// streamFixture is the handler served on a real listener at 127.0.0.1.
type streamFixture struct {
	url    string // the MCP endpoint
	origin string // scheme://127.0.0.1:port, an allowed Origin
	port   string
	client *http.Client
}

func newStreamFixture(t *testing.T, opts *mcp.HTTPOptions) *streamFixture {
	t.Helper()
	if opts == nil {
		opts = &mcp.HTTPOptions{}
	}
	if opts.Auth == nil {
		opts.Auth = streamAuth{}
	}
	srv := mcp.NewServer(streamServerInfo, streamRegistry(),
		&mcp.ServerOptions{Instructions: streamInstructions, ListTTL: 5 * time.Second})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHTTPHandler(srv, opts))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" {
		t.Fatalf("test server listens on %s, want 127.0.0.1", u.Host)
	}
	return &streamFixture{url: ts.URL + "/mcp", origin: ts.URL, port: u.Port(), client: ts.Client()}
}

// do sends one request and reads the whole answer. A "Host" entry in hdr
// becomes the request's Host.
func (f *streamFixture) do(t *testing.T, method string, hdr http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if hdr != nil {
		req.Header = hdr.Clone()
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, f.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, f.url, err)
	}
	return resp, b
}

// modernHeader is what a 2026-07-28 client sends with a POST.
func modernHeader(method, name string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+streamToken)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", mcp.Version20260728)
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

// legacyHeader is what an initialize-era client sends; version "" sends no
// MCP-Protocol-Version (2025-03-26 clients), sid "" no Mcp-Session-Id.
func legacyHeader(version, sid string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+streamToken)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	return h
}

func metaFor(version string) map[string]any {
	return map[string]any{
		mcp.MetaProtocolVersion:    version,
		mcp.MetaClientCapabilities: map[string]any{},
		mcp.MetaClientInfo:         map[string]any{"name": "streamable-test-client", "version": "1"},
	}
}

// withMeta returns params plus a 2026-07-28 _meta.
func withModernMeta(params map[string]any) map[string]any {
	out := map[string]any{"_meta": metaFor(mcp.Version20260728)}
	for k, v := range params {
		out[k] = v
	}
	return out
}

// rpc builds a JSON-RPC message; a nil id makes a notification.
func rpcBody(t *testing.T, id any, method string, params map[string]any) string {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rpcMsg is any JSON-RPC message as the test reads it.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcErr         `json:"error"`
}

type rpcErr struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func decodeRPC(t *testing.T, b []byte) rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("response %q is not JSON: %v", b, err)
	}
	if m.JSONRPC != "2.0" {
		t.Errorf("response jsonrpc = %q, want 2.0", m.JSONRPC)
	}
	return m
}

// readSSE splits an event stream into its events' data payloads.
func readSSE(t *testing.T, body []byte) []rpcMsg {
	t.Helper()
	var out []rpcMsg
	var data []string
	flush := func() {
		if len(data) > 0 {
			out = append(out, decodeRPC(t, []byte(strings.Join(data, "\n"))))
			data = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, "event:"):
			if ev := strings.TrimSpace(strings.TrimPrefix(line, "event:")); ev != "message" {
				t.Errorf("SSE event type = %q, want message", ev)
			}
		}
	}
	flush()
	return out
}

func b64Name(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// eraBody is one request per era, answered 200 when let through.
type eraBody struct {
	name   string
	header func() http.Header
	body   func(t *testing.T) string
}

func eraBodies() []eraBody {
	return []eraBody{
		{
			name:   "modern",
			header: func() http.Header { return modernHeader("server/discover", "") },
			body:   func(t *testing.T) string { return rpcBody(t, 1, "server/discover", withModernMeta(nil)) },
		},
		{
			name:   "legacy",
			header: func() http.Header { return legacyHeader("", "") },
			body: func(t *testing.T) string {
				return rpcBody(t, 1, "initialize", map[string]any{
					"protocolVersion": mcp.Version20251125,
					"capabilities":    map[string]any{},
					"clientInfo":      map[string]any{"name": "c", "version": "1"},
				})
			},
		},
	}
}

func TestHTTPGuards(t *testing.T) {
	const maxBody = 4096
	f := newStreamFixture(t, &mcp.HTTPOptions{MaxBodyBytes: maxBody})
	tests := []struct {
		name       string
		edit       func(h http.Header)
		bigBody    bool
		wantStatus int
	}{
		{name: "let through", edit: func(h http.Header) {}, wantStatus: http.StatusOK},
		{name: "no token", edit: func(h http.Header) { h.Del("Authorization") }, wantStatus: http.StatusUnauthorized},
		{name: "wrong token", edit: func(h http.Header) { h.Set("Authorization", "Bearer "+strings.Repeat("x", len(streamToken))) }, wantStatus: http.StatusUnauthorized},
		{name: "basic scheme", edit: func(h http.Header) { h.Set("Authorization", "Basic "+streamToken) }, wantStatus: http.StatusUnauthorized},
		{name: "foreign origin", edit: func(h http.Header) { h.Set("Origin", "http://evil.example.com") }, wantStatus: http.StatusForbidden},
		{name: "foreign origin on our port", edit: func(h http.Header) { h.Set("Origin", "http://evil.example.com:"+f.port) }, wantStatus: http.StatusForbidden},
		{name: "null origin", edit: func(h http.Header) { h.Set("Origin", "null") }, wantStatus: http.StatusForbidden},
		{name: "non-http origin", edit: func(h http.Header) { h.Set("Origin", "file://127.0.0.1") }, wantStatus: http.StatusForbidden},
		{name: "foreign host", edit: func(h http.Header) { h.Set("Host", "evil.example.com") }, wantStatus: http.StatusForbidden},
		{name: "foreign host on our port", edit: func(h http.Header) { h.Set("Host", "evil.example.com:"+f.port) }, wantStatus: http.StatusForbidden},
		{name: "origin 127.0.0.1", edit: func(h http.Header) { h.Set("Origin", f.origin) }, wantStatus: http.StatusOK},
		{name: "origin localhost", edit: func(h http.Header) { h.Set("Origin", "http://localhost:"+f.port) }, wantStatus: http.StatusOK},
		{name: "host localhost", edit: func(h http.Header) { h.Set("Host", "localhost:"+f.port) }, wantStatus: http.StatusOK},
		{name: "host [::1]", edit: func(h http.Header) { h.Set("Host", "[::1]:"+f.port) }, wantStatus: http.StatusOK},
		{name: "body too large", edit: func(h http.Header) {}, bigBody: true, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "content type text/plain", edit: func(h http.Header) { h.Set("Content-Type", "text/plain") }, wantStatus: http.StatusUnsupportedMediaType},
		{name: "no content type", edit: func(h http.Header) { h.Del("Content-Type") }, wantStatus: http.StatusUnsupportedMediaType},
		{name: "content type with charset", edit: func(h http.Header) { h.Set("Content-Type", "application/json; charset=utf-8") }, wantStatus: http.StatusOK},
		{name: "accept text/html", edit: func(h http.Header) { h.Set("Accept", "text/html") }, wantStatus: http.StatusNotAcceptable},
		{name: "accept json only", edit: func(h http.Header) { h.Set("Accept", "application/json") }, wantStatus: http.StatusOK},
	}
	for _, era := range eraBodies() {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				h := era.header()
				tt.edit(h)
				body := era.body(t)
				if tt.bigBody {
					// Still one valid JSON-RPC message, just too long.
					var m map[string]any
					if err := json.Unmarshal([]byte(body), &m); err != nil {
						t.Fatal(err)
					}
					m["params"].(map[string]any)["padding"] = strings.Repeat("p", 2*maxBody)
					b, err := json.Marshal(m)
					if err != nil {
						t.Fatal(err)
					}
					body = string(b)
				}
				resp, got := f.do(t, http.MethodPost, h, body)
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("POST %s status = %d (%q), want %d", tt.name, resp.StatusCode, got, tt.wantStatus)
				}
				if tt.wantStatus == http.StatusUnauthorized {
					if wa := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer") {
						t.Errorf("POST %s WWW-Authenticate = %q, want Bearer...", tt.name, wa)
					}
					if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
						t.Errorf("POST %s minted Mcp-Session-Id %q for an unauthenticated request", tt.name, sid)
					}
				}
				if tt.wantStatus == http.StatusOK {
					m := decodeRPC(t, got)
					if m.Error != nil || len(m.Result) == 0 {
						t.Errorf("POST %s = %s, want a result", tt.name, got)
					}
				}
			})
		}
	}
}

// TestHTTPGuardsOtherMethods checks that GET and DELETE pass the same gates
// before anything else looks at them.
func TestHTTPGuardsOtherMethods(t *testing.T) {
	f := newStreamFixture(t, nil)
	tests := []struct {
		name       string
		method     string
		edit       func(h http.Header)
		wantStatus int
	}{
		{"GET no token", http.MethodGet, func(h http.Header) { h.Del("Authorization") }, http.StatusUnauthorized},
		{"DELETE no token", http.MethodDelete, func(h http.Header) { h.Del("Authorization") }, http.StatusUnauthorized},
		{"GET foreign origin", http.MethodGet, func(h http.Header) { h.Set("Origin", "http://evil.example.com") }, http.StatusForbidden},
		{"DELETE foreign host", http.MethodDelete, func(h http.Header) { h.Set("Host", "evil.example.com") }, http.StatusForbidden},
		{"PUT", http.MethodPut, func(h http.Header) {}, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := legacyHeader("", "")
			tt.edit(h)
			resp, body := f.do(t, tt.method, h, "")
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("%s status = %d (%q), want %d", tt.name, resp.StatusCode, body, tt.wantStatus)
			}
		})
	}
}
