package mcptest_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"winx/mcp"
	"winx/mcp/mcptest"
)

// These tests need no Node.js: they check, in memory, the fixture properties
// the conformance suite relies on, so a broken fixture shows up here with a
// precise message rather than as a failed scenario.

func newClient(caps map[string]any) *mcptest.Client {
	return &mcptest.Client{Handler: mcp.NewHTTPHandler(mcptest.NewFixtureServer(nil), nil), Capabilities: caps}
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,64}$`)

func TestCatalog(t *testing.T) {
	c := newClient(nil)
	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	res, err := c.Call(t.Context(), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Decode(&tools); err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) == 0 || tools.Tools[0].Name != "test_simple_text" {
		t.Fatalf("first tool is not test_simple_text: %+v", tools.Tools)
	}
	listed := map[string]json.RawMessage{}
	for _, tool := range tools.Tools {
		listed[tool.Name] = tool.InputSchema
		if !toolName.MatchString(tool.Name) {
			t.Errorf("tool name %q breaks SEP-986", tool.Name)
		}
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
			t.Errorf("tool %s: inputSchema %s is not {\"type\":\"object\",...}", tool.Name, tool.InputSchema)
		}
	}
	want := []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_progress",
		"test_tool_with_logging", "test_logging_tool", "test_streaming_elicitation",
		"test_missing_capability", "test_sampling", "test_elicitation",
		"test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"test_trigger_tool_change", "test_trigger_prompt_change",
		"test_input_required_result_elicitation", "test_input_required_result_sampling",
		"test_input_required_result_list_roots", "test_input_required_result_request_state",
		"test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
		"test_input_required_result_tampered_state", "test_input_required_result_capabilities",
		"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete",
		"multi_input", "test_tool_with_task", "json_schema_2020_12_tool", "test_custom_header",
	}
	for _, name := range want {
		if _, ok := listed[name]; !ok {
			t.Errorf("tool %s is not listed", name)
		}
	}
	// The 2020-12 schema must survive byte for byte (modulo whitespace).
	var compact bytes.Buffer
	if err := json.Compact(&compact, listed["json_schema_2020_12_tool"]); err != nil {
		t.Fatal(err)
	}
	for _, kw := range []string{`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$anchor":"addressDef"`,
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}]`, `"additionalProperties":false`} {
		if !strings.Contains(compact.String(), kw) {
			t.Errorf("json_schema_2020_12_tool schema lost %s: %s", kw, compact.String())
		}
	}

	var prompts struct {
		Prompts []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"prompts"`
	}
	res, err = c.Call(t.Context(), "prompts/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Decode(&prompts); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
	}
	for _, name := range []string{"test_simple_prompt", "test_prompt_with_arguments",
		"test_prompt_with_embedded_resource", "test_prompt_with_image", "test_input_required_result_prompt"} {
		if !slices.Contains(names, name) {
			t.Errorf("prompt %s is not listed (have %v)", name, names)
		}
	}
}

// content is the part of a tools/call result the table below checks.
type content struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MIMEType string `json:"mimeType"`
		Resource *struct {
			URI  string `json:"uri"`
			Text string `json:"text"`
		} `json:"resource"`
	} `json:"content"`
}

func (c content) types() []string {
	var out []string
	for _, b := range c.Content {
		out = append(out, b.Type)
	}
	return out
}

func TestContentTools(t *testing.T) {
	c := newClient(nil)
	tests := []struct {
		tool      string
		wantTypes []string
		wantError bool
		wantText  string // in the first block, when set
	}{
		{tool: "test_simple_text", wantTypes: []string{"text"}, wantText: "This is a simple text response for testing."},
		{tool: "test_image_content", wantTypes: []string{"image"}},
		{tool: "test_audio_content", wantTypes: []string{"audio"}},
		{tool: "test_embedded_resource", wantTypes: []string{"resource"}},
		{tool: "test_multiple_content_types", wantTypes: []string{"text", "image", "resource"}},
		{tool: "test_error_handling", wantTypes: []string{"text"}, wantError: true},
		{tool: "test_logging_tool", wantTypes: []string{"text"}},
		{tool: "test_custom_header", wantTypes: []string{"text"}, wantText: "region="},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := c.Call(t.Context(), "tools/call", map[string]any{"name": tt.tool, "arguments": map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			var got content
			if err := res.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.types(), tt.wantTypes) || got.IsError != tt.wantError {
				t.Errorf("%s = types %v isError %v, want %v %v", tt.tool, got.types(), got.IsError, tt.wantTypes, tt.wantError)
			}
			if tt.wantText != "" && got.Content[0].Text != tt.wantText {
				t.Errorf("%s text = %q, want %q", tt.tool, got.Content[0].Text, tt.wantText)
			}
			if len(res.Notifications) != 0 {
				t.Errorf("%s sent %d notifications to a request without logLevel or progressToken", tt.tool, len(res.Notifications))
			}
		})
	}
}

func TestProgressTool(t *testing.T) {
	c := newClient(nil)
	res, err := c.Call(t.Context(), "tools/call", map[string]any{
		"name": "test_tool_with_progress", "arguments": map[string]any{},
		"_meta": map[string]any{"progressToken": "progress-test-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var progress []float64
	for _, n := range res.Notifications {
		var p struct {
			Token    string  `json:"progressToken"`
			Progress float64 `json:"progress"`
		}
		if n.Method == "notifications/progress" && json.Unmarshal(n.Params, &p) == nil && p.Token == "progress-test-1" {
			progress = append(progress, p.Progress)
		}
	}
	if !slices.Equal(progress, []float64{0, 50, 100}) {
		t.Errorf("progress notifications = %v, want [0 50 100]", progress)
	}
}

func TestMissingCapability(t *testing.T) {
	res, err := newClient(nil).Call(t.Context(), "tools/call", map[string]any{"name": "test_missing_capability", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != mcp.CodeMissingRequiredClientCapability || res.Status != 400 {
		t.Fatalf("test_missing_capability without sampling = HTTP %d %v, want 400 and code %d", res.Status, res.Error, mcp.CodeMissingRequiredClientCapability)
	}
	if want := `{"requiredCapabilities":{"sampling":{}}}`; string(res.Error.Data) != want {
		t.Errorf("error data = %s, want %s", res.Error.Data, want)
	}
}

// inputRequired is the part of an input_required result the tests read.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
}

func TestMultiRound(t *testing.T) {
	c := newClient(map[string]any{"elicitation": map[string]any{}})
	call := func(responses map[string]any, state string) *mcptest.Response {
		t.Helper()
		params := map[string]any{"name": "test_input_required_result_multi_round", "arguments": map[string]any{}}
		if responses != nil {
			params["inputResponses"] = responses
		}
		if state != "" {
			params["requestState"] = state
		}
		res, err := c.Call(t.Context(), "tools/call", params)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	accept := func(content map[string]any) map[string]any {
		return map[string]any{"action": "accept", "content": content}
	}
	var r1, r2 inputRequired
	if err := call(nil, "").Decode(&r1); err != nil || r1.ResultType != mcp.ResultInputRequired || r1.InputRequests["step1"] == nil {
		t.Fatalf("round 1 = %+v, %v; want input_required asking step1", r1, err)
	}
	if err := call(map[string]any{"step1": accept(map[string]any{"name": "Alice"})}, r1.RequestState).Decode(&r2); err != nil ||
		r2.ResultType != mcp.ResultInputRequired || r2.InputRequests["step2"] == nil || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2 = %+v, %v; want input_required asking step2 with a new requestState", r2, err)
	}
	var done content
	if err := call(map[string]any{"step2": accept(map[string]any{"color": "blue"})}, r2.RequestState).Decode(&done); err != nil {
		t.Fatal(err)
	}
	if want := "Multi-round complete for Alice who likes blue"; len(done.Content) != 1 || done.Content[0].Text != want {
		t.Errorf("round 3 = %+v, want text %q", done, want)
	}
	if res := call(map[string]any{"step2": accept(map[string]any{"color": "blue"})}, r2.RequestState+"-TAMPERED"); res.Error == nil {
		t.Errorf("a tampered requestState was accepted: %s", res.Result)
	}
}

func TestTaskLifecycle(t *testing.T) {
	withTasks := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}
	c := newClient(withTasks)
	res, err := c.Call(t.Context(), "tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := res.Decode(&created); err != nil || created.ResultType != mcp.ResultTask || created.TaskID == "" {
		t.Fatalf("confirm_delete = %s, %v; want a task", res.Result, err)
	}
	type detailed struct {
		Status        string                     `json:"status"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		Result        *content                   `json:"result"`
	}
	poll := func(until func(detailed) bool) detailed {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			res, err := c.Call(t.Context(), "tasks/get", map[string]any{"taskId": created.TaskID})
			if err != nil {
				t.Fatal(err)
			}
			var d detailed
			if err := res.Decode(&d); err != nil {
				t.Fatal(err)
			}
			if until(d) {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("task stuck at %+v", d)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	asked := poll(func(d detailed) bool { return d.Status == mcp.TaskInputRequired })
	if asked.InputRequests["confirm_delete"] == nil {
		t.Fatalf("input_required task asks %v, want confirm_delete", asked.InputRequests)
	}
	res, err = c.Call(t.Context(), "tasks/update", map[string]any{"taskId": created.TaskID,
		"inputResponses": map[string]any{"confirm_delete": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	if err != nil || res.Error != nil {
		t.Fatalf("tasks/update = %+v, %v", res, err)
	}
	done := poll(func(d detailed) bool { return d.Status != mcp.TaskInputRequired && d.Status != mcp.TaskWorking })
	if done.Status != mcp.TaskCompleted || done.Result == nil || done.Result.Content[0].Text != "Deleted a.txt" {
		t.Errorf("task ended as %+v, want completed with \"Deleted a.txt\"", done)
	}

	// failing_job requires a task: without the extension it is refused.
	res, err = newClient(nil).Call(t.Context(), "tools/call", map[string]any{"name": "failing_job", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Code != mcp.CodeMissingRequiredClientCapability {
		t.Errorf("failing_job without the tasks extension = %s %v, want code %d", res.Result, res.Error, mcp.CodeMissingRequiredClientCapability)
	}
}
