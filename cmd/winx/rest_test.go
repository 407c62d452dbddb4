package main

// The REST tool API of `winx serve --http --rest`, driven like curl drives
// it: raw HTTP requests to a real listener on 127.0.0.1, principals from a
// principals file, every tool of the catalog called once.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"winx/mcp"
	"winx/mcp/mcptest"
	"winx/mcp/usage"
)

// restDo sends one request to s; hdr may set Host. It returns the status,
// headers and body.
func restDo(t *testing.T, s *runningServe, method, path, token, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return mcptest.RawRequest(t, s.client, method, s.base+path, token, body, hdr)
}

// restCall posts {"name": tool, "arguments": args} and returns the status
// and body.
func restCall(t *testing.T, s *runningServe, token, tool string, args map[string]any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	resp, b := restDo(t, s, http.MethodPost, mcp.RESTCallPath, token, string(body), nil)
	return resp.StatusCode, b
}

// restEnvelope is a REST call's answer: the tools/call result.
type restEnvelope struct {
	Content           []map[string]any `json:"content"`
	IsError           bool             `json:"isError"`
	StructuredContent *toolAnswer      `json:"structuredContent"`
}

func decodeEnvelope(t *testing.T, tool string, b []byte) restEnvelope {
	t.Helper()
	var e restEnvelope
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s: answer %q is not JSON: %v", tool, b, err)
	}
	if e.Content == nil || e.StructuredContent == nil || e.StructuredContent.Status == "" {
		t.Fatalf("%s: answer %s is not a tool result envelope", tool, b)
	}
	return e
}

func restToolNames(t *testing.T, s *runningServe, token string) []string {
	t.Helper()
	resp, b := restDo(t, s, http.MethodGet, mcp.RESTToolsPath, token, "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/tools = %d %s", resp.StatusCode, b)
	}
	var list struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func restErrCode(t *testing.T, b []byte) string {
	t.Helper()
	var e mcp.RESTError
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%q is not a REST error: %v", b, err)
	}
	return e.Error.Code
}

func writeTinyPNG(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Without --rest the REST paths do not exist.
func TestRESTOffByDefault(t *testing.T) {
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""))
	tok := confinedTokens["alice"]
	for _, c := range []struct{ method, path, body string }{
		{"GET", mcp.RESTToolsPath, ""}, {"POST", mcp.RESTCallPath, `{"name":"Initialize"}`}, {"GET", mcp.RESTOpenAPIPath, ""},
	} {
		if resp, b := restDo(t, s, c.method, c.path, tok, c.body, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s without --rest = %d %s, want 404", c.method, c.path, resp.StatusCode, b)
		}
	}
}

// TestRESTServe: authentication, rebinding checks, body limit, profiles,
// isolation, the OpenAPI document and a call of every tool, over one
// server, with the usage log on.
func TestRESTServe(t *testing.T) {
	usageLog := filepath.Join(t.TempDir(), "usage.jsonl")
	t.Setenv("WINX_USAGE_LOG", usageLog)
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""), "--rest", "--max-body-bytes", "65536")
	alice, bob, dave := confinedTokens["alice"], confinedTokens["bob"], confinedTokens["dave"]

	t.Run("refusals", func(t *testing.T) {
		for _, c := range []struct {
			name, method, path, token, body string
			hdr                             map[string]string
			status                          int
			code                            string
		}{
			{"no token", "GET", mcp.RESTToolsPath, "", "", nil, 401, mcp.RESTUnauthorized},
			{"bad token", "POST", mcp.RESTCallPath, "x" + alice, `{"name":"Initialize"}`, nil, 401, mcp.RESTUnauthorized},
			{"bad origin", "POST", mcp.RESTCallPath, alice, `{"name":"Initialize"}`, map[string]string{"Origin": "https://evil.example"}, 403, mcp.RESTForbidden},
			{"bad host", "GET", mcp.RESTOpenAPIPath, alice, "", map[string]string{"Host": "evil.example:80"}, 403, mcp.RESTForbidden},
			{"too large", "POST", mcp.RESTCallPath, alice, `{"name":"BashCommand","arguments":{"command":"` + strings.Repeat("x", 70000) + `"}}`, nil, 413, mcp.RESTBodyTooLarge},
			{"malformed", "POST", mcp.RESTCallPath, alice, `{"name":"Initialize",`, nil, 400, mcp.RESTBadRequest},
			{"unknown member", "POST", mcp.RESTCallPath, alice, `{"name":"Initialize","argument":{}}`, nil, 400, mcp.RESTBadRequest},
			{"missing name", "POST", mcp.RESTCallPath, alice, `{"arguments":{}}`, nil, 400, mcp.RESTBadRequest},
			{"unknown tool", "POST", mcp.RESTCallPath, alice, `{"name":"NoSuchTool"}`, nil, 404, mcp.RESTUnknownTool},
			// /mcp answers a tool the profile hides exactly like an
			// unknown one (-32602 "unknown tool"); REST keeps that: 404.
			{"hidden by profile", "POST", mcp.RESTCallPath, dave, `{"name":"BashCommand","arguments":{"command":"id"}}`, nil, 404, mcp.RESTUnknownTool},
			{"wrong method", "PUT", mcp.RESTCallPath, alice, `{}`, nil, 405, mcp.RESTMethodNotAllowed},
			{"not JSON", "POST", mcp.RESTCallPath, alice, `{"name":"Initialize"}`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, mcp.RESTUnsupportedMedia},
		} {
			resp, b := restDo(t, s, c.method, c.path, c.token, c.body, c.hdr)
			if resp.StatusCode != c.status {
				t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, b, c.status)
				continue
			}
			if got := restErrCode(t, b); got != c.code {
				t.Errorf("%s: error code %q, want %q", c.name, got, c.code)
			}
		}
		// The same hidden tool over /mcp: a JSON-RPC "unknown tool".
		h := callHeader("BashCommand")
		h.Set("Authorization", "Bearer "+dave)
		if a := decodeToolAnswer(t, "BashCommand", mustPost(t, s, h, callBody(3, "BashCommand", map[string]any{"command": "id"}))); a.Status != "rpc_error" || !strings.Contains(a.Message, "unknown tool") {
			t.Errorf("/mcp BashCommand as dave = %+v, want an unknown tool error", a)
		}
	})

	t.Run("catalog and OpenAPI per principal", func(t *testing.T) {
		docs := map[string][]byte{}
		for _, who := range []string{"alice", "dave"} {
			tok := confinedTokens[who]
			names := restToolNames(t, s, tok)
			if want := toolsFor(t, s, tok); !slices.Equal(names, want) {
				t.Errorf("%s: GET /api/tools = %v, tools/list = %v", who, names, want)
			}
			resp, b := restDo(t, s, http.MethodGet, mcp.RESTOpenAPIPath, tok, "", nil)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: GET /api/openapi.json = %d %s", who, resp.StatusCode, b)
			}
			if got := openAPIToolNames(t, b); !slices.Equal(got, names) {
				t.Errorf("%s: OpenAPI tools %v, catalog %v", who, got, names)
			}
			docs[who] = b
		}
		if bytes.Equal(docs["alice"], docs["dave"]) {
			t.Error("alice (full) and dave (three tools) got the same OpenAPI document")
		}
	})

	t.Run("every tool", func(t *testing.T) {
		root := canonDir(t, t.TempDir())
		if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		writeTinyPNG(t, filepath.Join(root, "dot.png"))
		code, b := restCall(t, s, alice, "Initialize", map[string]any{"type": "first_call", "any_workspace_path": root})
		if code != http.StatusOK {
			t.Fatalf("Initialize = %d %s", code, b)
		}
		init := decodeEnvelope(t, "Initialize", b)
		thread, ws := init.StructuredContent.str("thread_id"), init.StructuredContent.str("workspace_root")
		if thread == "" || ws == "" {
			t.Fatalf("Initialize gave no thread_id/workspace_root: %s", b)
		}
		bind := func(m map[string]any) map[string]any {
			m["thread_id"], m["workspace_root"] = thread, ws
			return m
		}
		minimal := map[string]map[string]any{
			"Initialize":  {"type": "first_call", "any_workspace_path": root},
			"BashCommand": bind(map[string]any{"action_json": map[string]any{"type": "command", "command": "echo rest-ok"}}),
			"ReadFiles":   bind(map[string]any{"file_paths": []string{filepath.Join(root, "main.go")}}),
			"EditFiles": bind(map[string]any{"operation": "apply", "files": []map[string]any{
				{"file_path": filepath.Join(root, "new.txt"), "mode": "replace", "content": "new\n"}}}),
			"ContextSave": bind(map[string]any{"id": "rest-test", "project_root_path": root, "description": "REST test",
				"relevant_file_globs": []string{"*.go"}}),
			"ReadImage": bind(map[string]any{"file_path": filepath.Join(root, "dot.png")}),
			"CodeMap":   bind(map[string]any{"operation": "outline", "path": "main.go"}),
		}
		for _, tool := range restToolNames(t, s, alice) {
			args, ok := minimal[tool]
			if !ok {
				t.Errorf("no minimal arguments for %s: add them here", tool)
				continue
			}
			code, b := restCall(t, s, alice, tool, args)
			if code != http.StatusOK {
				t.Errorf("%s = %d %s, want 200", tool, code, b)
				continue
			}
			e := decodeEnvelope(t, tool, b)
			t.Logf("%s: status %s errorCode %q isError %v", tool, e.StructuredContent.Status, e.StructuredContent.ErrorCode, e.IsError)
			if e.IsError {
				t.Errorf("%s with minimal arguments failed: %s", tool, b)
			}
			if tool == "BashCommand" && !strings.Contains(string(b), "rest-ok") {
				t.Errorf("BashCommand answer lacks the output: %s", b)
			}
		}
		// Isolation: bob naming alice's thread and workspace never reaches
		// her shell, whose state he probes.
		if code, b := restCall(t, s, alice, "BashCommand", bind(map[string]any{"action_json": map[string]any{"type": "command", "command": "export REST_PROBE=alice-shell"}})); code != http.StatusOK {
			t.Fatalf("alice's export = %d %s", code, b)
		}
		code, b = restCall(t, s, bob, "BashCommand", bind(map[string]any{"action_json": map[string]any{"type": "command", "command": `echo "probe=$REST_PROBE"`}}))
		if code != http.StatusOK {
			t.Fatalf("bob's BashCommand = %d %s", code, b)
		}
		e := decodeEnvelope(t, "BashCommand", b)
		t.Logf("bob with alice's thread: status %s errorCode %q", e.StructuredContent.Status, e.StructuredContent.ErrorCode)
		if strings.Contains(string(b), "probe=alice-shell") {
			t.Errorf("bob reached alice's shell over REST: %s", b)
		}
	})

	t.Run("usage log", func(t *testing.T) {
		f, err := os.Open(usageLog)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		calls := map[string]string{}  // requestId -> tool of tool_call lines
		restReqs := map[string]bool{} // requestIds of http_request lines on /api/tools/call
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e usage.Record // any schema the log is written in
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			switch {
			case e.Type == "tool_call":
				calls[e.RequestID] = e.Tool
			case e.Type == "http_request" && e.Path == mcp.RESTCallPath:
				restReqs[e.RequestID] = true
			}
		}
		seen := map[string]bool{}
		for id := range restReqs {
			if tool, ok := calls[id]; ok {
				seen[tool] = true
			}
		}
		for _, tool := range []string{"Initialize", "BashCommand", "ReadFiles", "EditFiles"} {
			if !seen[tool] {
				t.Errorf("the usage log has no tool_call of %s tied to a POST %s (tools seen: %v)", tool, mcp.RESTCallPath, seen)
			}
		}
	})
}

// mustPost is s.post, returning the body.
func mustPost(t *testing.T, s *runningServe, h http.Header, body string) []byte {
	t.Helper()
	_, b := s.post(t, h, body)
	return b
}

// openAPIToolNames returns the tool names the call operation's request
// body lists, in order, after checking the document's two operations.
func openAPIToolNames(t *testing.T, b []byte) []string {
	t.Helper()
	var doc struct {
		OpenAPI string                                             `json:"openapi"`
		Paths   map[string]map[string]struct{ OperationID string } `json:"paths"`
		Comps   struct {
			Schemas map[string]struct {
				Properties struct {
					Name struct{ Const string } `json:"name"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("OpenAPI document is not JSON: %v", err)
	}
	var ops []string
	for p, m := range doc.Paths {
		for verb, op := range m {
			ops = append(ops, verb+" "+p+" "+op.OperationID)
		}
	}
	slices.Sort(ops)
	if doc.OpenAPI != "3.1.0" || !slices.Equal(ops, []string{"get /api/tools listTools", "post /api/tools/call callTool"}) {
		t.Errorf("OpenAPI %q with operations %v", doc.OpenAPI, ops)
	}
	var raw struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						OneOf []struct {
							Ref string `json:"$ref"`
						} `json:"oneOf"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	json.Unmarshal(b, &raw)
	var names []string
	for _, alt := range raw.Paths[mcp.RESTCallPath]["post"].RequestBody.Content["application/json"].Schema.OneOf {
		key := strings.TrimPrefix(alt.Ref, "#/components/schemas/")
		names = append(names, doc.Comps.Schemas[key].Properties.Name.Const)
	}
	return names
}

// The admission gate's rate limit covers /api/: past it, 429 with
// Retry-After.
func TestRESTRateLimited(t *testing.T) {
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""), "--rest", "--requests-per-minute", "2")
	tok := confinedTokens["alice"]
	for i, want := range []int{200, 200, 429} {
		resp, b := restDo(t, s, http.MethodGet, mcp.RESTToolsPath, tok, "", nil)
		if resp.StatusCode != want {
			t.Fatalf("request %d = %d %s, want %d", i, resp.StatusCode, b, want)
		}
		if want == 429 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
}

// curl, when installed, drives the API as its README section shows.
func TestRESTWithCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skipf("curl is not on PATH (%v): the raw-HTTP tests above cover the same requests", err)
	}
	s := serveWith(t, "--principal-config", writeConfinedPrincipals(t, ""), "--rest")
	tok := confinedTokens["alice"]
	root := t.TempDir()
	run := func(args ...string) (body, status string) {
		t.Helper()
		out, err := exec.Command(curl, append([]string{"-sS", "-w", "\n%{http_code}", "-H", "Authorization: Bearer " + tok}, args...)...).Output()
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		i := strings.LastIndexByte(string(out), '\n')
		if i < 0 {
			t.Fatalf("curl %v: no status line in %q", args, out)
		}
		return string(out[:i]), string(out[i+1:])
	}
	body, status := run(s.base + mcp.RESTToolsPath)
	if status != "200" || !strings.Contains(body, `"name":"Initialize"`) {
		t.Fatalf("curl GET /api/tools = %s %s", status, body)
	}
	body, status = run("-H", "Content-Type: application/json",
		"-d", `{"name":"Initialize","arguments":{"type":"first_call","any_workspace_path":"`+root+`"}}`, s.base+mcp.RESTCallPath)
	if status != "200" || !strings.Contains(body, `"thread_id"`) {
		t.Fatalf("curl POST /api/tools/call = %s %s", status, body)
	}
	body, status = run(s.base + mcp.RESTOpenAPIPath)
	if status != "200" || !json.Valid([]byte(body)) {
		t.Fatalf("curl GET /api/openapi.json = %s %.200s", status, body)
	}
}
