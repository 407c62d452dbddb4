package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"winx/jsonrpc"
	"winx/mcp"
)

// addContentTools registers the tools whose results the suite inspects for
// content shapes. test_simple_text comes first: the header scenarios call
// the first listed tool with {} and need it to succeed.
func addContentTools(reg *mcp.Registry) {
	reg.AddTool(mcp.Tool{
		Name:        "test_simple_text",
		Description: "Tests simple text content response",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return mcp.TextResult("This is a simple text response for testing."), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_image_content",
		Description: "Tests image content response",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: TestImageBase64, MIMEType: "image/png"},
		}}, nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_audio_content",
		Description: "Tests audio content response",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.AudioContent{Data: TestAudioBase64, MIMEType: "audio/wav"},
		}}, nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_embedded_resource",
		Description: "Tests embedded resource content response",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.EmbeddedResource{Resource: mcp.TextResource("test://embedded-resource", "text/plain",
				"This is an embedded resource content.")},
		}}, nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_multiple_content_types",
		Description: "Tests response with multiple content types (text, image, resource)",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: TestImageBase64, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: mcp.TextResource("test://mixed-content-resource", "application/json",
				`{"test":"data","value":123}`)},
		}}, nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_error_handling",
		Description: "Tests error response handling",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return mcp.ErrorResult("This tool intentionally returns an error for testing"), nil
	})
}

// addInteractionTools registers the tools that talk back before answering:
// progress, logs, client input and change notifications.
func addInteractionTools(reg *mcp.Registry, n *notifier) {
	reg.AddTool(mcp.Tool{
		Name:        "test_tool_with_progress",
		Description: "Tests tool that reports progress notifications",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		total := 100.0
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if err := req.Progress(p, &total, fmt.Sprintf("Completed step %d of 100", int(p))); err != nil {
				return nil, err
			}
		}
		return mcp.TextResult("Progress reported in 3 steps"), nil
	})
	// test_tool_with_logging is 2025-11-25's tools-call-with-logging tool:
	// three messages at info, which the session's level admits.
	reg.AddTool(mcp.Tool{
		Name:        "test_tool_with_logging",
		Description: "Tests tool that emits log messages during execution",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if err := req.Log("info", "", msg); err != nil {
				return nil, err
			}
		}
		return mcp.TextResult("Tool with logging executed successfully"), nil
	})
	// test_logging_tool is 2026-07-28's probe that nothing is logged to a
	// request without _meta logLevel.
	reg.AddTool(mcp.Tool{
		Name:        "test_logging_tool",
		Description: "Logs at info; a 2026-07-28 request without logLevel must receive no log notifications",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Log("info", "", "test_logging_tool ran"); err != nil {
			return nil, err
		}
		return mcp.TextResult("Logging tool completed"), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_streaming_elicitation",
		Description: "Streams a progress notification before its result and never sends requests on the response stream",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Progress(1, nil, "streaming"); err != nil {
			return nil, err
		}
		return mcp.TextResult("Streaming completed without server-to-client requests"), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_missing_capability",
		Description: "Requires the sampling client capability and fails with -32021 without it",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		if !req.ClientCapabilities().Has("sampling") {
			return nil, jsonrpc.NewErrorWithData(mcp.CodeMissingRequiredClientCapability,
				"MissingRequiredClientCapabilityError",
				map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
		}
		return mcp.TextResult("Success"), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_sampling",
		Description: "Tests server-initiated sampling (LLM completion request)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Prompt string `json:"prompt"`
		}
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		answers, err := req.Input(ctx, map[string]mcp.InputRequest{"sampling": sampling(args.Prompt, 100)})
		if err != nil {
			return nil, err
		}
		var res samplingResult
		if err := decodeAnswer(answers, "sampling", &res); err != nil {
			return mcp.ErrorResult("sampling: " + err.Error()), nil
		}
		return mcp.TextResult("LLM response: " + res.Content.Text), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_elicitation",
		Description: "Tests server-initiated elicitation (user input request)",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Message string `json:"message"`
		}
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		return elicitAndEcho(ctx, req, "User response", elicitation(args.Message,
			`{"type":"object","properties":{"response":{"type":"string","description":"User's response"}},"required":["response"]}`))
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_elicitation_sep1034_defaults",
		Description: "Tests elicitation with default values for every primitive type (SEP-1034)",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return elicitAndEcho(ctx, req, "Elicitation completed", elicitation(
			"Please review and update the form fields with defaults",
			`{"type":"object","properties":{`+
				`"name":{"type":"string","description":"User name","default":"John Doe"},`+
				`"age":{"type":"integer","description":"User age","default":30},`+
				`"score":{"type":"number","description":"User score","default":95.5},`+
				`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},`+
				`"verified":{"type":"boolean","description":"Verification status","default":true}},`+
				`"required":[]}`))
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_elicitation_sep1330_enums",
		Description: "Tests elicitation with titled, untitled, legacy and multi-select enums (SEP-1330)",
		InputSchema: emptySchema,
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return elicitAndEcho(ctx, req, "Elicitation completed", elicitation(
			"Please select options from the enum fields",
			`{"type":"object","properties":{`+
				`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},`+
				`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},`+
				`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},`+
				`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},`+
				`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},`+
				`"required":[]}`))
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_trigger_tool_change",
		Description: "Announces a tools list change to every subscriptions/listen stream",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		n.srv.NotifyToolsChanged()
		return mcp.TextResult("Tools list change announced"), nil
	})
	reg.AddTool(mcp.Tool{
		Name:        "test_trigger_prompt_change",
		Description: "Announces a prompts list change to every subscriptions/listen stream",
		InputSchema: emptySchema,
	}, func(context.Context, *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		n.srv.NotifyPromptsChanged()
		return mcp.TextResult("Prompts list change announced"), nil
	})
}

// elicitAndEcho asks one elicitation and answers with the client's action
// and content, as the reference server does.
func elicitAndEcho(ctx context.Context, req *mcp.ToolRequest, prefix string, ir mcp.InputRequest) (*mcp.CallToolResult, error) {
	answers, err := req.Input(ctx, map[string]mcp.InputRequest{"elicitation": ir})
	if err != nil {
		return nil, err
	}
	var res struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := decodeAnswer(answers, "elicitation", &res); err != nil {
		return mcp.ErrorResult("elicitation: " + err.Error()), nil
	}
	content := "{}"
	if len(res.Content) > 0 {
		content = string(res.Content)
	}
	return mcp.TextResult(fmt.Sprintf("%s: action=%s, content=%s", prefix, res.Action, content)), nil
}

// jsonSchema202012 is the suite's json-schema-2020-12 input schema; it must
// reach tools/list byte for byte, so it is never decoded.
const jsonSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`

// addSchemaTools registers the tools whose schemas the suite inspects.
func addSchemaTools(reg *mcp.Registry) {
	reg.AddTool(mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		InputSchema: json.RawMessage(jsonSchema202012),
	}, func(_ context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		return mcp.TextResult("Received: " + string(req.Arguments)), nil
	})
	// test_custom_header mirrors "region" into the Mcp-Param-Region header
	// (SEP-2243 x-mcp-header); it echoes the value so accepted calls succeed.
	reg.AddTool(mcp.Tool{
		Name:        "test_custom_header",
		Description: "Echoes its region argument, which clients mirror into the Mcp-Param-Region header",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"Region to echo","x-mcp-header":"Region"}}}`),
	}, func(_ context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Region string `json:"region"`
		}
		if bad := decodeArgs(req, &args); bad != nil {
			return bad, nil
		}
		return mcp.TextResult("region=" + args.Region), nil
	})
}
