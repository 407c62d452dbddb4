package mcptest

import (
	"context"
	"fmt"
	"strings"

	"winx/jsonrpc"
	"winx/mcp"
)

// The multi round-trip (SEP-2322) fixtures. Each asks through
// ToolRequest.Input, so in 2026-07-28 the first round answers input_required
// and the retry completes, while a 2025-11-25 session gets the same questions
// as server-to-client requests. requestState sealing, tamper detection and
// capability checks are package mcp's; the tools only ask and read answers.

const (
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`
	confirmSchema = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
)

// addMRTRTools registers the input-required-result-* tools.
func addMRTRTools(reg *mcp.Registry) {
	mrtr := func(name, description string, h mcp.ToolHandler) {
		reg.AddTool(mcp.Tool{Name: name, Description: "MRTR: " + description, InputSchema: emptySchema}, h)
	}
	mrtr("test_input_required_result_elicitation", "asks the user's name by elicitation",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			answers, err := req.Input(ctx, map[string]mcp.InputRequest{
				"user_name": elicitation("What is your name?", nameSchema),
			})
			if err != nil {
				return nil, err
			}
			var e elicitResult
			if err := decodeAnswer(answers, "user_name", &e); err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			return mcp.TextResult("Hello, " + e.field("name") + "!"), nil
		})
	mrtr("test_input_required_result_sampling", "asks the client's model a question by sampling",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			answers, err := req.Input(ctx, map[string]mcp.InputRequest{
				"capital_question": sampling("What is the capital of France?", 100),
			})
			if err != nil {
				return nil, err
			}
			var s samplingResult
			if err := decodeAnswer(answers, "capital_question", &s); err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			return mcp.TextResult("Sampling result: " + s.Content.Text), nil
		})
	mrtr("test_input_required_result_list_roots", "asks the client for its roots",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			answers, err := req.Input(ctx, map[string]mcp.InputRequest{"roots_request": listRoots()})
			if err != nil {
				return nil, err
			}
			var r rootsResult
			if err := decodeAnswer(answers, "roots_request", &r); err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			return mcp.TextResult(fmt.Sprintf("Found %d root(s)", len(r.Roots))), nil
		})
	mrtr("test_input_required_result_request_state", "asks for a confirmation and completes from the echoed requestState",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			return confirm(ctx, req, "state-ok: requestState validated")
		})
	mrtr("test_input_required_result_tampered_state", "asks for a confirmation; a tampered requestState must be refused",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			return confirm(ctx, req, "state-ok: requestState intact")
		})
	mrtr("test_input_required_result_multiple_inputs", "asks by elicitation, sampling and roots in one round",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			answers, err := req.Input(ctx, map[string]mcp.InputRequest{
				"user_name":    elicitation("What is your name?", nameSchema),
				"greeting":     sampling("Generate a greeting", 50),
				"client_roots": listRoots(),
			})
			if err != nil {
				return nil, err
			}
			var (
				e elicitResult
				s samplingResult
				r rootsResult
			)
			for key, v := range map[string]any{"user_name": &e, "greeting": &s, "client_roots": &r} {
				if err := decodeAnswer(answers, key, v); err != nil {
					return mcp.ErrorResult(err.Error()), nil
				}
			}
			return mcp.TextResult(fmt.Sprintf("Name: %s; Greeting: %s; Roots: %d", e.field("name"), s.Content.Text, len(r.Roots))), nil
		})
	mrtr("test_input_required_result_multi_round", "asks a name, then a favourite colour, in two rounds",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			first, err := req.Input(ctx, map[string]mcp.InputRequest{
				"step1": elicitation("Step 1: What is your name?", nameSchema),
			})
			if err != nil {
				return nil, err
			}
			var name elicitResult
			if err := decodeAnswer(first, "step1", &name); err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			second, err := req.Input(ctx, map[string]mcp.InputRequest{
				"step2": elicitation("Step 2: What is your favorite color?",
					`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`),
			})
			if err != nil {
				return nil, err
			}
			var color elicitResult
			if err := decodeAnswer(second, "step2", &color); err != nil {
				return mcp.ErrorResult(err.Error()), nil
			}
			return mcp.TextResult(fmt.Sprintf("Multi-round complete for %s who likes %s", name.field("name"), color.field("color"))), nil
		})
	mrtr("test_input_required_result_capabilities", "asks only through the input capabilities the client declared",
		func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			caps := req.ClientCapabilities()
			reqs := map[string]mcp.InputRequest{}
			if caps.Has("sampling") {
				reqs["sample_input"] = sampling("Sample request", 50)
			}
			if caps.Has("elicitation") {
				reqs["elicit_input"] = elicitation("Elicitation request", confirmSchema)
			}
			if len(reqs) == 0 {
				return mcp.TextResult("capabilities-ok: the client declared no input capability"), nil
			}
			answers, err := req.Input(ctx, reqs)
			if err != nil {
				return nil, err
			}
			keys := make([]string, 0, len(answers))
			for _, k := range []string{"elicit_input", "sample_input"} {
				if _, ok := answers[k]; ok {
					keys = append(keys, k)
				}
			}
			return mcp.TextResult("capabilities-ok: received " + strings.Join(keys, ", ")), nil
		})
}

// confirm asks one yes/no elicitation under the key "confirm".
func confirm(ctx context.Context, req *mcp.ToolRequest, done string) (*mcp.CallToolResult, error) {
	answers, err := req.Input(ctx, map[string]mcp.InputRequest{
		"confirm": elicitation("Please confirm", confirmSchema),
	})
	if err != nil {
		return nil, err
	}
	var e elicitResult
	if err := decodeAnswer(answers, "confirm", &e); err != nil {
		return mcp.ErrorResult(err.Error()), nil
	}
	if e.Action != "accept" {
		return mcp.ErrorResult("confirmation " + e.Action), nil
	}
	return mcp.TextResult(done), nil
}

// mrtrPrompt is the input-required-result-non-tool-request prompt: MRTR on
// prompts/get rather than tools/call.
func mrtrPrompt(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
	answers, err := req.Input(ctx, map[string]mcp.InputRequest{
		"user_context": elicitation("What context should the prompt use?",
			`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`),
	})
	if err != nil {
		return nil, err
	}
	var e elicitResult
	if err := decodeAnswer(answers, "user_context", &e); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, err.Error())
	}
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: "Prompt with context: " + e.field("context")}},
	}}, nil
}
