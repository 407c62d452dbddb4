package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Status is the authoritative outcome of a Winx tool call.
type Status string

// Statuses of the result envelope. Only StatusCompleted is a plain success;
// StatusRunning and StatusAwaitingInput/Approval are progress, not failure.
const (
	StatusCompleted           Status = "completed"
	StatusCompletedWithIssues Status = "completed_with_issues"
	StatusRunning             Status = "running"
	StatusAwaitingInput       Status = "awaiting_input"
	StatusAwaitingApproval    Status = "awaiting_approval"
	StatusNeedsRead           Status = "needs_read"
	StatusNeedsInitialize     Status = "needs_initialize"
	StatusConflict            Status = "conflict"
	StatusRecoveryExhausted   Status = "recovery_exhausted"
	StatusNotFound            Status = "not_found"
	StatusDenied              Status = "denied"
	StatusInvalidInput        Status = "invalid_input"
	StatusFailed              Status = "failed"
)

var envelopeStatuses = []Status{
	StatusCompleted, StatusCompletedWithIssues, StatusRunning, StatusAwaitingInput,
	StatusAwaitingApproval, StatusNeedsRead, StatusNeedsInitialize, StatusConflict,
	StatusRecoveryExhausted, StatusNotFound, StatusDenied, StatusInvalidInput, StatusFailed,
}

// isError reports whether the status makes the MCP result an error result
// (a recoverable failure the model should read).
func (s Status) isError() bool {
	switch s {
	case StatusCompleted, StatusCompletedWithIssues, StatusRunning, StatusAwaitingInput, StatusAwaitingApproval:
		return false
	}
	return true
}

// NextAction is a call the server can prove is the next safe step; its
// Arguments are ready to send.
type NextAction struct {
	Tool        string         `json:"tool"`
	Instruction string         `json:"instruction"`
	Arguments   map[string]any `json:"arguments"`
}

// RequiredRead names the ranges of a file that must be read before an edit,
// as ReadFiles suffixes without the colon ("231-301", "90-").
type RequiredRead struct {
	Path   string   `json:"path"`
	Ranges []string `json:"ranges"`
}

// Envelope is the structured result every Winx tool returns. Tools fill it
// and call Result; nothing hand-builds the JSON.
//
// On the wire it is lean (MarshalJSON): status and tool always; retryable,
// retrySameCall and errorCode only when the call is not plainly completed;
// every other member only when it says something. Clients such as Claude
// Code hand the model structuredContent alone, so each default costs the
// model bytes on every call.
type Envelope struct {
	Status Status `json:"status"`
	Tool   string `json:"tool"`
	// Message is one sentence; it is left out when it would repeat the
	// text.
	Message string `json:"message,omitempty"`
	// ErrorCode is a machine code, set whenever Status is not completed.
	ErrorCode string `json:"errorCode,omitempty"`
	Retryable bool   `json:"retryable"`
	// RetrySameCall is always false: a rejected call is never repeated
	// unchanged. It is a field so the wire carries it on every answer
	// that is not plainly completed.
	RetrySameCall bool           `json:"retrySameCall"`
	RetryAfterMs  int64          `json:"retryAfterMs,omitempty"`
	NextAction    *NextAction    `json:"nextAction,omitempty"`
	RequiredReads []RequiredRead `json:"requiredReads,omitempty"`
	Data          any            `json:"data,omitempty"`
	// Output is the delivered text (the joined text blocks after limits and
	// redaction); Result fills it from the text.
	Output string `json:"output"`

	// body is the text Result was given, before the action line.
	body string
}

// envelopeWire is the Envelope as it is sent: the retry members are
// pointers so a plain completion leaves them out. Output stays last (the
// encoder in encode.go relies on it).
type envelopeWire struct {
	Status        Status         `json:"status"`
	Tool          string         `json:"tool"`
	Message       string         `json:"message,omitempty"`
	ErrorCode     string         `json:"errorCode,omitempty"`
	Retryable     *bool          `json:"retryable,omitempty"`
	RetrySameCall *bool          `json:"retrySameCall,omitempty"`
	RetryAfterMs  int64          `json:"retryAfterMs,omitempty"`
	NextAction    *NextAction    `json:"nextAction,omitempty"`
	RequiredReads []RequiredRead `json:"requiredReads,omitempty"`
	Data          any            `json:"data,omitempty"`
	Output        string         `json:"output"`
}

// MarshalJSON writes the lean wire form, without HTML escaping.
func (e Envelope) MarshalJSON() ([]byte, error) {
	w := envelopeWire{
		Status: e.Status, Tool: e.Tool, Message: e.Message, ErrorCode: e.ErrorCode,
		RetryAfterMs: e.RetryAfterMs, NextAction: e.NextAction, RequiredReads: e.RequiredReads,
		Data: e.Data, Output: e.Output,
	}
	if e.Status != StatusCompleted {
		retryable, same := e.Retryable, false
		w.Retryable, w.RetrySameCall = &retryable, &same
	}
	return marshalPlain(w)
}

// Body is the text the envelope's result was built from, without the
// action line Result adds: a step that amends a result (a warning before
// the text) builds the new result from it, so the line is not doubled.
func (e Envelope) Body() string { return e.body }

// Result builds the MCP tool result: the text block(s), the envelope as
// structuredContent, and isError for recoverable failures. It panics on an
// envelope that breaks its invariants (a programming error in a tool).
func (e Envelope) Result(text string, extra ...Content) *CallToolResult {
	if err := e.validate(); err != nil {
		panic(err.Error())
	}
	e.RetrySameCall = false
	// The text is complete on its own: a client that shows only text
	// still sees the status and the next call. message never repeats it.
	e.body = text
	if e.Message == text {
		e.Message = ""
	}
	if line := e.actLine(text); line != "" {
		if text != "" {
			text += "\n"
		}
		text += line
	}
	e.Output = text
	if e.Status == StatusRunning && e.RetryAfterMs == 0 {
		e.RetryAfterMs = 1000
	}
	content := make([]Content, 0, 1+len(extra))
	content = append(content, &TextContent{Text: text})
	content = append(content, extra...)
	return &CallToolResult{Content: content, StructuredContent: e, IsError: e.Status.isError()}
}

// maxActArgs bounds the arguments shown in the action line.
const maxActArgs = 300

// actLine is the one line that tells a text-only client what it must act
// on: the status when the call is not plainly completed, and the next
// call (its arguments without the session binding, which the model
// already holds). "" for a plain completion.
func (e Envelope) actLine(text string) string {
	if e.Status == StatusCompleted && e.NextAction == nil {
		return ""
	}
	var b strings.Builder
	if e.Status != StatusCompleted {
		b.WriteString("status: " + string(e.Status))
		if e.ErrorCode != "" {
			b.WriteString(" (" + e.ErrorCode + ")")
		}
		// A warning that is only in message (a still-running check)
		// joins the line.
		if e.Message != "" && !strings.Contains(text, e.Message) {
			b.WriteString(": " + strings.Join(strings.Fields(e.Message), " "))
		}
	}
	if na := e.NextAction; na != nil {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString("next: " + na.Tool)
		args := make(map[string]any, len(na.Arguments))
		for k, v := range na.Arguments {
			if k != "thread_id" && k != "workspace_root" {
				args[k] = v
			}
		}
		if raw, err := json.Marshal(args); err == nil && len(args) > 0 {
			shown := string(raw)
			if len(shown) > maxActArgs {
				shown = shown[:maxActArgs] + "…"
			}
			b.WriteString(" " + shown)
		}
	}
	return b.String()
}

func (e Envelope) validate() error {
	known := false
	for _, s := range envelopeStatuses {
		known = known || s == e.Status
	}
	switch {
	case !known:
		return fmt.Errorf("mcp: envelope status %q is not one of the documented statuses", e.Status)
	case e.Tool == "":
		return fmt.Errorf("mcp: envelope without a tool name")
	case e.Status != StatusCompleted && e.ErrorCode == "" && e.Status != StatusRunning:
		return fmt.Errorf("mcp: envelope status %q needs an errorCode", e.Status)
	case e.Status == StatusNeedsRead && len(e.RequiredReads) == 0:
		return fmt.Errorf("mcp: needs_read envelope without requiredReads")
	}
	return nil
}

// EnvelopeOutputSchema is the outputSchema every Winx tool declares. Every
// tool repeats it in tools/list, so it names only what every answer has (the
// fields and statuses are documented once, in the tool reference); every
// other envelope member is optional, as a lean answer leaves it out when it
// holds a default (MarshalJSON), and allowed, not described. It follows the
// strict-client rules: no titles, no $ref, no integer formats, no boolean
// schemas.
var EnvelopeOutputSchema = json.RawMessage(mustMarshal(map[string]any{
	"type":     "object",
	"required": []string{"status", "tool", "output"},
	"properties": map[string]any{
		"status": map[string]any{"type": "string"},
		"tool":   map[string]any{"type": "string"},
		"output": map[string]any{"type": "string"},
	},
}))
