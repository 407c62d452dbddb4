package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Modern _meta of the requests below, without and with the tasks extension.
const (
	modernMeta      = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	modernTasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
)

// routeCase is one request over stdio and the error object it must get,
// byte for byte ("" when it must succeed).
type routeCase struct {
	name    string
	method  string
	params  string // the params object's members, without braces
	wantErr string
}

// serveLines sends one request per case (ids 1..n) to a fresh stdio server
// on reg and returns each answer's error object ("" for a result), by case.
func serveLines(t *testing.T, reg *Registry, cases []routeCase) []string {
	t.Helper()
	var in strings.Builder
	for i, c := range cases {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`+"\n", i+1, c.method, c.params)
	}
	srv := NewServer(Implementation{Name: "t", Version: "1"}, reg, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := srv.ServeStdio(ctx, strings.NewReader(in.String()), &out, nil); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(cases))
	seen := make([]bool, len(cases))
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var resp struct {
			ID    int             `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil || resp.ID < 1 || resp.ID > len(cases) {
			t.Fatalf("answer %q: %v", line, err)
		}
		got[resp.ID-1], seen[resp.ID-1] = string(resp.Error), true
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("no answer to %s (%s)", cases[i].name, cases[i].method)
		}
	}
	return got
}

// TestRouteErrors pins the errors of dispatch, byte for byte: unknown
// methods, methods of the other era, methods of a capability the registry
// does not offer, and the params errors of the handlers the table decodes
// for. Transcripts and the conformance suite depend on them.
func TestRouteErrors(t *testing.T) {
	notFound := func(m string) string { return `{"code":-32601,"message":"method not found: ` + m + `"}` }
	empty := []routeCase{
		{name: "legacy unknown", method: "nope/nothing", wantErr: notFound("nope/nothing")},
		{name: "legacy empty method", method: "x", wantErr: notFound("x")},
		{name: "legacy discover", method: "server/discover", wantErr: notFound("server/discover")},
		{name: "legacy listen", method: "subscriptions/listen", wantErr: notFound("subscriptions/listen")},
		{name: "legacy tasks/update", method: "tasks/update", params: `"taskId":"a"`, wantErr: notFound("tasks/update")},
		{name: "legacy prompts without prompts", method: "prompts/list", wantErr: notFound("prompts/list")},
		{name: "legacy prompts/get without prompts", method: "prompts/get", wantErr: notFound("prompts/get")},
		{name: "legacy resources without resources", method: "resources/read", params: `"uri":"x:y"`, wantErr: notFound("resources/read")},
		{name: "legacy resources/subscribe without resources", method: "resources/subscribe", wantErr: notFound("resources/subscribe")},
		{name: "legacy unknown resources method", method: "resources/nope", wantErr: notFound("resources/nope")},
		{name: "legacy ping", method: "ping"},
		{name: "legacy tools/list", method: "tools/list"},
		{name: "legacy tools/list cursor", method: "tools/list", params: `"cursor":"c"`, wantErr: `{"code":-32602,"message":"invalid cursor"}`},
		{name: "legacy tools/list bad cursor", method: "tools/list", params: `"cursor":5`,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal number into Go struct field listParams.cursor of type string"}`},
		{name: "legacy setLevel", method: "logging/setLevel", params: `"level":"debug"`},
		{name: "legacy setLevel unknown", method: "logging/setLevel", params: `"level":"loud"`,
			wantErr: `{"code":-32602,"message":"logging/setLevel: unknown level \"loud\""}`},
		{name: "legacy setLevel bad type", method: "logging/setLevel", params: `"level":5`,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal number into Go struct field setLevelParams.level of type mcp.LoggingLevel"}`},
		{name: "legacy complete bad ref", method: "completion/complete", params: `"ref":{"type":"ref/x"}`,
			wantErr: `{"code":-32602,"message":"unknown reference type \"ref/x\""}`},
		{name: "legacy complete bad type", method: "completion/complete", params: `"ref":5`,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal number into Go struct field completeParams.ref of type struct { Type string \"json:\\\"type\\\"\"; Name string \"json:\\\"name\\\"\"; URI string \"json:\\\"uri\\\"\" }"}`},
		{name: "legacy tasks/get unknown", method: "tasks/get", params: `"taskId":"a"`, wantErr: `{"code":-32602,"message":"unknown task \"a\""}`},
		{name: "legacy tasks/list", method: "tasks/list"},
		{name: "modern unknown", method: "nope/nothing", params: modernMeta, wantErr: notFound("nope/nothing")},
		{name: "modern initialize", method: "initialize", params: modernMeta, wantErr: notFound("initialize")},
		{name: "modern ping", method: "ping", params: modernMeta, wantErr: notFound("ping")},
		{name: "modern setLevel", method: "logging/setLevel", params: `"level":"debug",` + modernMeta, wantErr: notFound("logging/setLevel")},
		{name: "modern tasks/list", method: "tasks/list", params: modernMeta, wantErr: notFound("tasks/list")},
		{name: "modern tasks/result", method: "tasks/result", params: `"taskId":"a",` + modernMeta, wantErr: notFound("tasks/result")},
		{name: "modern tasks/list with the extension", method: "tasks/list", params: modernTasksMeta, wantErr: notFound("tasks/list")},
		{name: "modern tasks/get without the extension", method: "tasks/get", params: `"taskId":"a",` + modernMeta,
			wantErr: `{"code":-32021,"message":"the tasks extension was not declared","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`},
		{name: "modern tasks/update without the extension", method: "tasks/update", params: `"taskId":"a",` + modernMeta,
			wantErr: `{"code":-32021,"message":"the tasks extension was not declared","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`},
		{name: "modern tasks/get unknown", method: "tasks/get", params: `"taskId":"a",` + modernTasksMeta, wantErr: `{"code":-32602,"message":"unknown task \"a\""}`},
		{name: "modern tasks/update unknown", method: "tasks/update", params: `"taskId":"a",` + modernTasksMeta, wantErr: `{"code":-32602,"message":"unknown task \"a\""}`},
		{name: "modern resources/subscribe", method: "resources/subscribe", params: `"uri":"x:y",` + modernMeta, wantErr: notFound("resources/subscribe")},
		{name: "modern prompts without prompts", method: "prompts/get", params: modernMeta, wantErr: notFound("prompts/get")},
		{name: "modern discover", method: "server/discover", params: modernMeta},
		{name: "modern tools/list", method: "tools/list", params: modernMeta},
		{name: "modern tools/list cursor", method: "tools/list", params: `"cursor":"c",` + modernMeta, wantErr: `{"code":-32602,"message":"invalid cursor"}`},
		{name: "modern complete", method: "completion/complete", params: `"ref":{"type":"ref/prompt","name":"p"},` + modernMeta,
			wantErr: `{"code":-32602,"message":"unknown prompt \"p\""}`},
	}
	full := []routeCase{
		{name: "legacy prompts/list", method: "prompts/list"},
		{name: "legacy prompts/list cursor", method: "prompts/list", params: `"cursor":"c"`, wantErr: `{"code":-32602,"message":"invalid cursor"}`},
		{name: "legacy resources/list", method: "resources/list"},
		{name: "legacy resources/templates/list", method: "resources/templates/list"},
		{name: "legacy resources/templates/list cursor", method: "resources/templates/list", params: `"cursor":"c"`, wantErr: `{"code":-32602,"message":"invalid cursor"}`},
		{name: "legacy unknown resources method", method: "resources/nope", wantErr: notFound("resources/nope")},
		{name: "legacy resources/subscribe", method: "resources/subscribe", params: `"uri":"x:y"`},
		{name: "legacy resources/unsubscribe no uri", method: "resources/unsubscribe", wantErr: `{"code":-32602,"message":"uri is required"}`},
		{name: "legacy resources/subscribe bad uri", method: "resources/subscribe", params: `"uri":1`,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal number into Go struct field subscribeParams.uri of type string"}`},
		{name: "legacy complete prompt", method: "completion/complete", params: `"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}`},
		{name: "legacy complete resource", method: "completion/complete", params: `"ref":{"type":"ref/resource","uri":"nope:x"}`,
			wantErr: `{"code":-32602,"message":"unknown resource reference \"nope:x\""}`},
		{name: "modern prompts/list", method: "prompts/list", params: modernMeta},
		{name: "modern resources/list", method: "resources/list", params: modernMeta},
		{name: "modern resources/unsubscribe", method: "resources/unsubscribe", params: `"uri":"x:y",` + modernMeta, wantErr: notFound("resources/unsubscribe")},
	}
	reg := NewRegistry()
	reg.AddPrompt(Prompt{Name: "p"}, func(context.Context, *PromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }, nil)
	reg.AddResource(Resource{URI: "x:y", Name: "y"}, func(context.Context, *ResourceRequest) (*ReadResourceResult, error) { return &ReadResourceResult{}, nil })
	for _, run := range []struct {
		reg   *Registry
		cases []routeCase
	}{{NewRegistry(), empty}, {reg, full}} {
		got := serveLines(t, run.reg, run.cases)
		for i, c := range run.cases {
			if got[i] != c.wantErr {
				t.Errorf("%s: %s = error %s, want %s", c.name, c.method, got[i], c.wantErr)
			}
		}
	}
}
