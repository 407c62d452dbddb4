package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"winx/jsonrpc"
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
		{name: "legacy tasks/list ignores params", method: "tasks/list", params: `"taskId":5`},
		{name: "legacy tasks/get bad id", method: "tasks/get", params: `"taskId":5`,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal number into Go struct field taskIDParams.taskId of type string"}`},
		{name: "legacy tasks/cancel unknown", method: "tasks/cancel", params: `"taskId":"a"`, wantErr: `{"code":-32602,"message":"unknown task \"a\""}`},
		{name: "legacy tasks/result unknown", method: "tasks/result", params: `"taskId":"a"`, wantErr: `{"code":-32602,"message":"unknown task \"a\""}`},
		{name: "legacy tasks/result bad id", method: "tasks/result", params: `"taskId":[]`,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal array into Go struct field taskIDParams.taskId of type string"}`},
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
		{name: "modern tasks/cancel without the extension", method: "tasks/cancel", params: `"taskId":"a",` + modernMeta,
			wantErr: `{"code":-32021,"message":"the tasks extension was not declared","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`},
		{name: "modern tasks/cancel unknown", method: "tasks/cancel", params: `"taskId":"a",` + modernTasksMeta, wantErr: `{"code":-32602,"message":"unknown task \"a\""}`},
		{name: "modern tasks/get bad id", method: "tasks/get", params: `"taskId":5,` + modernTasksMeta,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal number into Go struct field taskIDParams.taskId of type string"}`},
		{name: "modern tasks/update bad responses", method: "tasks/update", params: `"taskId":"a","inputResponses":[],` + modernTasksMeta,
			wantErr: `{"code":-32602,"message":"invalid params: json: cannot unmarshal array into Go struct field taskIDParams.inputResponses of type map[string]json.RawMessage"}`},
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
	reg.AddResource(Resource{URI: "x:y", Name: "y"}, func(context.Context, *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{}, nil
	})
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

// TestRouteTable walks the method table: every method has one row, era
// flags are consistent, each row is found exactly in its era and under its
// capability, and anything else gets the unknown-method error dispatch
// always gave.
func TestRouteTable(t *testing.T) {
	full := NewRegistry()
	full.AddPrompt(Prompt{Name: "p"}, func(context.Context, *PromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil }, nil)
	full.AddResource(Resource{URI: "x:y", Name: "y"}, func(context.Context, *ResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{}, nil
	})
	withAll := NewServer(Implementation{Name: "t", Version: "1"}, full, nil)
	bareSrv := NewServer(Implementation{Name: "t", Version: "1"}, NewRegistry(), nil)

	tasksCaps := ClientCapabilities{"extensions": json.RawMessage(`{"` + TasksExtension + `":{}}`)}
	legacy := &exchange{era: eraLegacy, legacy: newLegacyConn(LatestLegacyVersion, nil, nil)}
	modern := &exchange{era: eraModern, caps: tasksCaps}
	modernNoTasks := &exchange{era: eraModern, caps: ClientCapabilities{}}

	rows := withAll.routes()
	if len(rows) != len(withAll.table) {
		t.Errorf("routes() has %d rows, the table %d methods: a method has two rows", len(rows), len(withAll.table))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.method] {
			t.Errorf("method %s has two rows", r.method)
		}
		seen[r.method] = true
		if r.flags&modernOnly != 0 && r.flags&legacyOnly != 0 {
			t.Errorf("%s: both modern only and legacy only", r.method)
		}
		if r.flags&needsTasksExtension != 0 && r.flags&legacyOnly != 0 {
			t.Errorf("%s: legacy only, so the tasks extension it needs is never asked for", r.method)
		}
		if r.handle == nil {
			t.Errorf("%s: no handler", r.method)
		}
		for _, c := range []struct {
			ex   *exchange
			want bool
		}{{legacy, r.flags&modernOnly == 0}, {modern, r.flags&legacyOnly == 0}} {
			got, err := withAll.lookup(c.ex, r.method)
			if (got != nil) != c.want {
				t.Errorf("lookup(era %d, %s) = %v, %v; want found %v", c.ex.era, r.method, got, err, c.want)
			}
			if !c.want {
				wantNotFound(t, err, r.method)
			}
			got, err = bareSrv.lookup(c.ex, r.method)
			if gated := r.flags&(needsPrompts|needsResources) != 0; c.want && !gated && got == nil {
				t.Errorf("without prompts or resources, lookup(era %d, %s) = %v, want found", c.ex.era, r.method, err)
			} else if gated || !c.want {
				wantNotFound(t, err, r.method)
			}
		}
		if r.flags&(needsTasksExtension|legacyOnly) == needsTasksExtension {
			_, err := withAll.lookup(modernNoTasks, r.method)
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != CodeMissingRequiredClientCapability || we.Message != "the tasks extension was not declared" {
				t.Errorf("lookup(modern without tasks, %s) = %v, want the tasks extension error", r.method, err)
			}
		}
	}
	// Answered by the transports before dispatch, never by a row.
	for _, m := range []string{"initialize", "subscriptions/listen", "notifications/initialized", "notifications/cancelled"} {
		if seen[m] {
			t.Errorf("%s has a row, but the transports answer it before dispatch", m)
		}
	}
	for _, m := range []string{"", "nope", "tools/nope", "resources/nope", "tasks/nope", "initialize", "subscriptions/listen", "Tools/list"} {
		for _, ex := range []*exchange{legacy, modern} {
			_, err := withAll.lookup(ex, m)
			wantNotFound(t, err, m)
		}
	}
}

// wantNotFound checks err is dispatch's unknown-method error for method.
func wantNotFound(t *testing.T, err error, method string) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeMethodNotFound || we.Message != "method not found: "+method || we.Data != nil {
		t.Errorf("lookup(%q) = %v, want -32601 %q", method, err, "method not found: "+method)
	}
}

// TestRouteTableRefusesBadRows: the table is built once per server and a
// bad row is a programming error, found at NewServer.
func TestRouteTableRefusesBadRows(t *testing.T) {
	h := func(context.Context, *exchange, *jsonrpc.Request) (result, error) { return &EmptyResult{}, nil }
	tests := []struct {
		name string
		rows []route
	}{
		{"duplicate", []route{{method: "a", handle: h}, {method: "a", handle: h}}},
		{"both eras only", []route{{method: "a", flags: modernOnly | legacyOnly, handle: h}}},
		{"no handler", []route{{method: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("routeTable(%s) did not panic", tt.name)
				}
			}()
			routeTable(tt.rows)
		})
	}
}
