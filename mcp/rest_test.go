package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"winx/mcp"
	"winx/mcp/mcptest"
)

// The REST tool API on a real listener at 127.0.0.1, beside /mcp, with two
// principals: "full" sees every tool, "narrow" only Alpha.

const (
	restFullToken   = "rest-full-token-0123456789abcdefghijklmn"
	restNarrowToken = "rest-narrow-token-0123456789abcdefghijkl"
)

type restAuth struct{}

func (restAuth) Authenticate(r *http.Request) (mcp.Caller, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer " + restFullToken:
		return mcp.Caller{Principal: "full", Profile: mcp.FullProfile()}, nil
	case "Bearer " + restNarrowToken:
		return mcp.Caller{Principal: "narrow", Profile: mcp.NewProfile("narrow", []string{"Alpha"})}, nil
	}
	return mcp.Caller{}, mcp.ErrUnauthorized
}

type restFixture struct {
	base    string
	client  *http.Client
	mu      sync.Mutex
	records []mcp.ToolCallRecord
}

func newRESTFixture(t testing.TB, maxBody int64) *restFixture {
	t.Helper()
	f := &restFixture{client: &http.Client{}}
	reg := echoRegistry()
	reg.AddTool(mcp.Tool{Name: "Fails", Description: "always a tool error", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			return mcp.ErrorResult("it failed"), nil
		})
	srv := mcp.NewServer(mcp.Implementation{Name: "rest-test", Title: "REST test", Version: "1.2.3"}, reg, &mcp.ServerOptions{
		ToolObserver: func(r mcp.ToolCallRecord) {
			f.mu.Lock()
			f.records = append(f.records, r)
			f.mu.Unlock()
		},
	})
	opts := &mcp.HTTPOptions{Auth: restAuth{}, MaxBodyBytes: maxBody}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHTTPHandler(srv, opts))
	mux.Handle("/api/", mcp.NewRESTHandler(srv, opts))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("test server at %s, want 127.0.0.1", ts.URL)
	}
	f.base = ts.URL
	return f
}

// do sends one request; hdr may set Host.
func (f *restFixture) do(t *testing.T, method, path, token, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return mcptest.RawRequest(t, f.client, method, f.base+path, token, body, hdr)
}

func restErrorCode(t *testing.T, b []byte) string {
	t.Helper()
	var e mcp.RESTError
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" {
		t.Fatalf("body %q is not a REST error: %v", b, err)
	}
	return e.Error.Code
}

func TestRESTListMatchesToolsList(t *testing.T) {
	f := newRESTFixture(t, 0)
	for _, c := range []struct {
		token string
		want  []string
	}{{restFullToken, []string{"Alpha", "Beta", "Fails"}}, {restNarrowToken, []string{"Alpha"}}} {
		resp, b := f.do(t, http.MethodGet, mcp.RESTToolsPath, c.token, "", nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /api/tools = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		var got struct {
			Tools []mcp.Tool `json:"tools"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range got.Tools {
			names = append(names, tl.Name)
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("GET /api/tools names = %v, want %v", names, c.want)
		}
		// Exactly the tools array of tools/list over /mcp.
		rpc := f.mcpCall(t, c.token, "tools/list", `{}`)
		var list struct {
			Result struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		json.Unmarshal(rpc, &list)
		var rest struct {
			Tools json.RawMessage `json:"tools"`
		}
		json.Unmarshal(b, &rest)
		if !bytes.Equal(list.Result.Tools, rest.Tools) {
			t.Errorf("REST tools %s\n/mcp tools %s", rest.Tools, list.Result.Tools)
		}
	}
}

// mcpCall sends a stateless 2026-07-28 request to /mcp and returns the
// JSON-RPC response body.
func (f *restFixture) mcpCall(t *testing.T, token, method, params string) []byte {
	t.Helper()
	var p struct{ Name string }
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	// The params go out byte for byte (arguments unreordered), with _meta.
	meta := `"_meta":{"` + mcp.MetaProtocolVersion + `":"` + mcp.Version20260728 + `","` + mcp.MetaClientCapabilities + `":{}}`
	withMeta := strings.TrimSuffix(strings.TrimSpace(params), "}")
	if strings.TrimSpace(withMeta) != "{" {
		withMeta += ","
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + withMeta + meta + `}}`
	hdr := map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": method, "Accept": "application/json"}
	if p.Name != "" {
		hdr["Mcp-Name"] = p.Name
	}
	resp, b := f.do(t, http.MethodPost, "/mcp", token, body, hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/mcp %s = %d %s", method, resp.StatusCode, b)
	}
	return b
}

func TestRESTCallIsTheToolsCallResult(t *testing.T) {
	f := newRESTFixture(t, 0)
	resp, b := f.do(t, http.MethodPost, mcp.RESTCallPath, restFullToken, `{"name":"Beta","arguments":{"x":1,"thread_id":"t1"}}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/tools/call = %d %s", resp.StatusCode, b)
	}
	rpc := f.mcpCall(t, restFullToken, "tools/call", `{"name":"Beta","arguments":{"x":1,"thread_id":"t1"}}`)
	var wire struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(rpc, &wire); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, wire.Result) {
		t.Errorf("REST answer %s\n/mcp result  %s", b, wire.Result)
	}
	// A tool error is a result: 200 with isError.
	resp, b = f.do(t, http.MethodPost, mcp.RESTCallPath, restFullToken, `{"name":"Fails"}`, nil)
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(b, &res); resp.StatusCode != http.StatusOK || !res.IsError {
		t.Errorf("tool error = %d %s, want 200 with isError", resp.StatusCode, b)
	}
	// The observer (usage log) saw the REST calls as tools/call, with the
	// principal and thread.
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.records) != 3 {
		t.Fatalf("observer saw %d calls, want 3", len(f.records))
	}
	r := f.records[0]
	if r.Tool != "Beta" || r.Principal != "full" || r.Correlation != "t1" || r.ProtocolError || r.IsError {
		t.Errorf("record of the REST call = %+v", r)
	}
	if r2 := f.records[2]; r2.Tool != "Fails" || !r2.IsError {
		t.Errorf("record of the failing call = %+v", r2)
	}
}

func TestRESTRefusals(t *testing.T) {
	f := newRESTFixture(t, 1024)
	call := mcp.RESTCallPath
	tests := []struct {
		name, method, path, token, body string
		hdr                             map[string]string
		status                          int
		code                            string
	}{
		{"no token", "GET", mcp.RESTToolsPath, "", "", nil, 401, mcp.RESTUnauthorized},
		{"bad token", "POST", call, "wrong-" + restFullToken, `{"name":"Alpha"}`, nil, 401, mcp.RESTUnauthorized},
		{"bad origin", "GET", mcp.RESTToolsPath, restFullToken, "", map[string]string{"Origin": "http://evil.example"}, 403, mcp.RESTForbidden},
		{"bad host", "POST", call, restFullToken, `{"name":"Alpha"}`, map[string]string{"Host": "evil.example"}, 403, mcp.RESTForbidden},
		{"malformed", "POST", call, restFullToken, `{"name":`, nil, 400, mcp.RESTBadRequest},
		{"not an object", "POST", call, restFullToken, `["Alpha"]`, nil, 400, mcp.RESTBadRequest},
		{"missing name", "POST", call, restFullToken, `{"arguments":{}}`, nil, 400, mcp.RESTBadRequest},
		{"name not a string", "POST", call, restFullToken, `{"name":1}`, nil, 400, mcp.RESTBadRequest},
		{"unknown member", "POST", call, restFullToken, `{"name":"Alpha","task":{}}`, nil, 400, mcp.RESTBadRequest},
		{"arguments not an object", "POST", call, restFullToken, `{"name":"Alpha","arguments":[1]}`, nil, 400, mcp.RESTBadRequest},
		{"trailing data", "POST", call, restFullToken, `{"name":"Alpha"} {"name":"Beta"}`, nil, 400, mcp.RESTBadRequest},
		{"Mcp-Method header", "POST", call, restFullToken, `{"name":"Alpha"}`, map[string]string{"Mcp-Method": "subscriptions/listen"}, 400, mcp.RESTBadRequest},
		{"unknown tool", "POST", call, restFullToken, `{"name":"Gamma"}`, nil, 404, mcp.RESTUnknownTool},
		{"tool the profile hides", "POST", call, restNarrowToken, `{"name":"Beta"}`, nil, 404, mcp.RESTUnknownTool},
		{"unknown path", "GET", "/api/nothing", restFullToken, "", nil, 404, mcp.RESTNotFound},
		{"GET call", "GET", call, restFullToken, "", nil, 405, mcp.RESTMethodNotAllowed},
		{"POST list", "POST", mcp.RESTToolsPath, restFullToken, `{}`, nil, 405, mcp.RESTMethodNotAllowed},
		{"DELETE openapi", "DELETE", mcp.RESTOpenAPIPath, restFullToken, "", nil, 405, mcp.RESTMethodNotAllowed},
		{"text body", "POST", call, restFullToken, `{"name":"Alpha"}`, map[string]string{"Content-Type": "text/plain"}, 415, mcp.RESTUnsupportedMedia},
		{"too large", "POST", call, restFullToken, `{"name":"Alpha","arguments":{"x":"` + strings.Repeat("a", 2048) + `"}}`, nil, 413, mcp.RESTBodyTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := f.do(t, tc.method, tc.path, tc.token, tc.body, tc.hdr)
			if resp.StatusCode != tc.status {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, resp.StatusCode, b, tc.status)
			}
			if got := restErrorCode(t, b); got != tc.code {
				t.Errorf("error code = %q, want %q", got, tc.code)
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tc.status == 405 && resp.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.records) != 0 {
		t.Errorf("refused requests reached a tool: %+v", f.records)
	}
}

// openAPIDoc is the part of the OpenAPI document the tests check.
type openAPIDoc struct {
	OpenAPI string                               `json:"openapi"`
	Paths   map[string]map[string]map[string]any `json:"paths"`
	Comps   struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

// openAPITools returns the tools the call operation's oneOf lists, by the
// const of each alternative's name, checking each one's arguments schema
// is the tool's input schema.
func openAPITools(t *testing.T, b []byte, catalog map[string]json.RawMessage) []string {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("OpenAPI document is not valid JSON: %v", err)
	}
	var whole map[string]any
	json.Unmarshal(b, &whole)
	checkRefs(t, whole, whole)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	var ops []string
	for path, methods := range doc.Paths {
		for m, op := range methods {
			ops = append(ops, m+" "+path+" "+op["operationId"].(string))
		}
	}
	slices.Sort(ops)
	if want := []string{"get /api/tools listTools", "post /api/tools/call callTool"}; !slices.Equal(ops, want) {
		t.Errorf("operations = %v, want %v", ops, want)
	}
	body := doc.Paths[mcp.RESTCallPath]["post"]["requestBody"].(map[string]any)
	schema := body["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	var names []string
	oneOf, _ := schema["oneOf"].([]any)
	for _, alt := range oneOf {
		ref := alt.(map[string]any)["$ref"].(string)
		key, ok := strings.CutPrefix(ref, "#/components/schemas/")
		if !ok {
			t.Fatalf("$ref %q is not a component", ref)
		}
		var comp struct {
			Properties struct {
				Name      struct{ Const string } `json:"name"`
				Arguments json.RawMessage        `json:"arguments"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(doc.Comps.Schemas[key], &comp); err != nil {
			t.Fatal(err)
		}
		name := comp.Properties.Name.Const
		names = append(names, name)
		if want, ok := catalog[name]; !ok || !jsonEqual(comp.Properties.Arguments, want) {
			t.Errorf("tool %s: arguments schema %s, catalog input schema %s", name, comp.Properties.Arguments, want)
		}
	}
	return names
}

// checkRefs fails on a local $ref anywhere in v that does not name a member
// of root.
func checkRefs(t *testing.T, root map[string]any, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			var at any = root
			for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				m, _ := at.(map[string]any)
				if at, ok = m[part]; !ok {
					t.Errorf("$ref %q does not resolve", ref)
					return
				}
			}
		}
		for _, e := range x {
			checkRefs(t, root, e)
		}
	case []any:
		for _, e := range x {
			checkRefs(t, root, e)
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func TestRESTOpenAPIListsTheCallersTools(t *testing.T) {
	f := newRESTFixture(t, 0)
	docs := map[string]string{}
	for _, token := range []string{restFullToken, restNarrowToken} {
		resp, b := f.do(t, http.MethodGet, mcp.RESTToolsPath, token, "", nil)
		var list struct{ Tools []mcp.Tool }
		if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /api/tools = %d %s", resp.StatusCode, b)
		}
		catalog := map[string]json.RawMessage{}
		var want []string
		for _, tl := range list.Tools {
			catalog[tl.Name] = tl.InputSchema
			want = append(want, tl.Name)
		}
		resp, b = f.do(t, http.MethodGet, mcp.RESTOpenAPIPath, token, "", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/openapi.json = %d %s", resp.StatusCode, b)
		}
		if got := openAPITools(t, b, catalog); !slices.Equal(got, want) {
			t.Errorf("OpenAPI tools = %v, want the catalog %v", got, want)
		}
		docs[token] = string(b)
	}
	if docs[restFullToken] == docs[restNarrowToken] {
		t.Error("two principals with different profiles got the same OpenAPI document")
	}
}

// BenchmarkRESTCall compares one echo call through POST /api/tools/call
// with the same call as a stateless tools/call on /mcp, on a loopback
// listener: the REST door adds its decoding and nothing else.
func BenchmarkRESTCall(b *testing.B) {
	f := newRESTFixture(b, 0)
	meta := `"_meta":{"` + mcp.MetaProtocolVersion + `":"` + mcp.Version20260728 + `","` + mcp.MetaClientCapabilities + `":{}}`
	for _, c := range []struct {
		name, path, body string
		hdr              map[string]string
	}{
		{"rest", mcp.RESTCallPath, `{"name":"Alpha","arguments":{"x":1}}`, nil},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Alpha","arguments":{"x":1},` + meta + `}}`,
			map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "Alpha", "Accept": "application/json"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, f.base+c.path, strings.NewReader(c.body))
				req.Header.Set("Authorization", "Bearer "+restFullToken)
				req.Header.Set("Content-Type", "application/json")
				for k, v := range c.hdr {
					req.Header.Set(k, v)
				}
				resp, err := f.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s = %d", c.path, resp.StatusCode)
				}
			}
		})
	}
}

// A body that encoding/json would read loosely is refused before any tool
// runs: a member spelt in another case ({"Name": ...} would call the tool a
// proxy reading "name" does not see) or named twice (the last wins here,
// the first in many parsers), at the top or inside arguments. The answer
// is 400 naming the member; the exact spelling still calls the tool.
func TestRESTStrictMembers(t *testing.T) {
	f := newRESTFixture(t, 0)
	for _, tc := range []struct {
		name, body, member string
	}{
		{"name in another case", `{"Name":"Beta"}`, "Name"},
		{"name in capitals", `{"NAME":"Beta","arguments":{}}`, "NAME"},
		{"arguments in another case", `{"name":"Beta","Arguments":{"x":1}}`, "Arguments"},
		{"name twice", `{"name":"Alpha","name":"Beta"}`, "name"},
		{"name twice, differently spelt", `{"name":"Alpha","nAme":"Beta"}`, "nAme"},
		{"argument twice", `{"name":"Beta","arguments":{"x":1,"x":2}}`, "arguments.x"},
		{"nested member twice", `{"name":"Beta","arguments":{"files":[{"path":"a","path":"b"}]}}`, "arguments.files[0].path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := f.do(t, http.MethodPost, mcp.RESTCallPath, restFullToken, tc.body, nil)
			var e struct {
				Error struct{ Code, Message, Member string }
			}
			if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusBadRequest ||
				e.Error.Code != mcp.RESTBadRequest || e.Error.Member != tc.member || !strings.Contains(e.Error.Message, tc.member) {
				t.Errorf("POST %s = %d %s, want 400 %s naming member %q", tc.body, resp.StatusCode, b, mcp.RESTBadRequest, tc.member)
			}
		})
	}
	f.mu.Lock()
	n := len(f.records)
	f.mu.Unlock()
	if n != 0 {
		t.Fatalf("refused bodies reached a tool: %d calls", n)
	}
	resp, b := f.do(t, http.MethodPost, mcp.RESTCallPath, restFullToken, `{"name":"Beta","arguments":{"x":1,"files":[{"path":"a"},{"path":"b"}]}}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a correct body = %d %s, want 200", resp.StatusCode, b)
	}
}
