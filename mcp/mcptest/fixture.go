// Package mcptest builds the fixture catalog that the official MCP
// conformance suite (@modelcontextprotocol/conformance) drives a server with,
// for both protocol eras on one server: the 2026-07-28 stateless scenarios
// (multi round-trip input, the tasks extension, routing headers) and the
// 2025-11-25 session scenarios (server-to-client sampling and elicitation,
// logging, subscriptions). It owns only fixture behaviour; every protocol
// rule stays in package mcp, so the suite tests mcp and not this package.
// Client is a small in-memory 2026-07-28 client for tests of such servers.
//
// Reference: the suite's examples/servers/typescript/everything-server.ts
// (conformance c321dd3, 0.2.0-alpha.11). Texts, base64 data and schemas are
// copied from it where the suite compares them. Deliberate deviations:
//   - The tasks fixtures (greet, slow_compute, ...) run short: failing jobs
//     settle after ~200 ms rather than seconds, to keep the suite quick.
//   - test_reconnection (SSE polling, pending in the suite) is not offered:
//     package mcp does not replay streams on Last-Event-ID.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"winx/mcp"
)

// Fixture data the suite compares byte for byte.
const (
	// TestImageBase64 is a 1x1 PNG.
	TestImageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	// TestAudioBase64 is a minimal WAV file.
	TestAudioBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// NewFixtureServer returns a server offering every tool, prompt, resource,
// template and completion the conformance scenarios of 2026-07-28 and
// 2025-11-25 call. opts is passed to mcp.NewServer unchanged (nil means
// defaults).
func NewFixtureServer(opts *mcp.ServerOptions) *mcp.Server {
	reg := mcp.NewRegistry()
	n := &notifier{}
	addContentTools(reg)
	addInteractionTools(reg, n)
	addMRTRTools(reg)
	addTaskTools(reg)
	addSchemaTools(reg)
	addResources(reg)
	addPrompts(reg)
	n.srv = mcp.NewServer(mcp.Implementation{Name: "winx-conformance-fixture", Version: "1.0.0"}, reg, opts)
	return n.srv
}

// notifier lets tool handlers reach the server they are registered on, which
// exists only after the registry is complete.
// Invariant: srv is set before the server serves its first request.
type notifier struct {
	srv *mcp.Server
}

// emptySchema is the input schema of a tool without arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// decodeArgs unmarshals a tool's arguments; a fixture tool called with the
// wrong shape answers with a tool error the suite can read.
func decodeArgs(req *mcp.ToolRequest, v any) *mcp.CallToolResult {
	if err := json.Unmarshal(req.Arguments, v); err != nil {
		return mcp.ErrorResult(fmt.Sprintf("%s: invalid arguments: %v", req.Name, err))
	}
	return nil
}

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// elicitation builds an elicitation/create input request; schema is the
// requestedSchema JSON, kept verbatim.
func elicitation(message, schema string) mcp.InputRequest {
	return mcp.InputRequest{Method: "elicitation/create", Params: json.RawMessage(
		`{"message":` + string(mustJSON(message)) + `,"requestedSchema":` + schema + `}`)}
}

// sampling builds a sampling/createMessage input request with one user turn.
func sampling(prompt string, maxTokens int) mcp.InputRequest {
	return mcp.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": prompt}}},
		"maxTokens": maxTokens,
	}}
}

// listRoots builds a roots/list input request.
func listRoots() mcp.InputRequest {
	return mcp.InputRequest{Method: "roots/list", Params: map[string]any{}}
}

// elicitResult is the client's answer to elicitation/create.
type elicitResult struct {
	Action  string                     `json:"action"`
	Content map[string]json.RawMessage `json:"content"`
}

// samplingResult is the client's answer to sampling/createMessage.
type samplingResult struct {
	Model   string `json:"model"`
	Content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// rootsResult is the client's answer to roots/list.
type rootsResult struct {
	Roots []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"roots"`
}

// decodeAnswer unmarshals one input answer into v.
func decodeAnswer(answers map[string]json.RawMessage, key string, v any) error {
	raw, ok := answers[key]
	if !ok {
		return fmt.Errorf("no answer for %q", key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("answer %q: %w", key, err)
	}
	return nil
}

// field returns content[name] as text: a JSON string unquoted, anything
// else as its JSON.
func (e *elicitResult) field(name string) string {
	raw, ok := e.Content[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("mcptest: fixture value must marshal: " + err.Error())
	}
	return b
}
