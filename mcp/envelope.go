package mcp

import (
	"encoding/json"
	"fmt"
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
type Envelope struct {
	Status  Status `json:"status"`
	Tool    string `json:"tool"`
	Message string `json:"message"`
	// ErrorCode is a machine code, set whenever Status is not completed.
	ErrorCode string `json:"errorCode,omitempty"`
	Retryable bool   `json:"retryable"`
	// RetrySameCall is always false: a rejected call is never repeated
	// unchanged. It is a field so the wire always carries it.
	RetrySameCall bool           `json:"retrySameCall"`
	RetryAfterMs  int64          `json:"retryAfterMs,omitempty"`
	NextAction    *NextAction    `json:"nextAction,omitempty"`
	RequiredReads []RequiredRead `json:"requiredReads,omitempty"`
	Data          any            `json:"data,omitempty"`
	// Output is the delivered text (the joined text blocks after limits and
	// redaction); Result fills it from the text.
	Output string `json:"output"`
}

// Result builds the MCP tool result: the text block(s), the envelope as
// structuredContent, and isError for recoverable failures. It panics on an
// envelope that breaks its invariants (a programming error in a tool).
func (e Envelope) Result(text string, extra ...Content) *CallToolResult {
	if err := e.validate(); err != nil {
		panic(err.Error())
	}
	e.RetrySameCall = false
	e.Output = text
	if e.Status == StatusRunning && e.RetryAfterMs == 0 {
		e.RetryAfterMs = 1000
	}
	content := make([]Content, 0, 1+len(extra))
	content = append(content, &TextContent{Text: text})
	content = append(content, extra...)
	return &CallToolResult{Content: content, StructuredContent: e, IsError: e.Status.isError()}
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

// EnvelopeOutputSchema is the outputSchema every Winx tool declares. It
// follows the strict-client rules: no titles, no $ref, no integer formats,
// no boolean schemas.
var EnvelopeOutputSchema = json.RawMessage(mustMarshal(map[string]any{
	"type":     "object",
	"required": []string{"status", "tool", "message", "retryable", "retrySameCall", "output"},
	"properties": map[string]any{
		"status":        map[string]any{"type": "string", "enum": envelopeStatuses},
		"tool":          map[string]any{"type": "string"},
		"message":       map[string]any{"type": "string"},
		"errorCode":     map[string]any{"type": "string"},
		"retryable":     map[string]any{"type": "boolean"},
		"retrySameCall": map[string]any{"type": "boolean", "enum": []bool{false}},
		"retryAfterMs":  map[string]any{"type": "integer", "minimum": 0},
		"nextAction": map[string]any{
			"type":     "object",
			"required": []string{"tool", "instruction", "arguments"},
			"properties": map[string]any{
				"tool":        map[string]any{"type": "string"},
				"instruction": map[string]any{"type": "string"},
				"arguments":   map[string]any{"type": "object"},
			},
		},
		"requiredReads": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type":     "object",
				"required": []string{"path", "ranges"},
				"properties": map[string]any{
					"path":   map[string]any{"type": "string"},
					"ranges": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				},
			},
		},
		"data":   map[string]any{"type": "object"},
		"output": map[string]any{"type": "string"},
	},
}))
