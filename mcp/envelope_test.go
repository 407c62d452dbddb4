package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"winx/mcp"
)

func TestEnvelopeResult(t *testing.T) {
	tests := []struct {
		name      string
		env       mcp.Envelope
		wantError bool
		wantKeys  []string
		// wantAbsent are members a lean answer leaves out.
		wantAbsent []string
	}{
		{
			name:       "completed",
			env:        mcp.Envelope{Status: mcp.StatusCompleted, Tool: "ReadFiles", Message: "read 1 file", Data: map[string]int{"files": 1}},
			wantKeys:   []string{`"status":"completed"`, `"output":"text"`, `"data":{"files":1}`},
			wantAbsent: []string{`"retryable"`, `"retrySameCall"`, `"errorCode"`},
		},
		{
			name: "needs read",
			env: mcp.Envelope{Status: mcp.StatusNeedsRead, Tool: "EditFiles", Message: "read first", ErrorCode: "read_required",
				Retryable: true, RequiredReads: []mcp.RequiredRead{{Path: "/w/a.go", Ranges: []string{"1-20"}}},
				NextAction: &mcp.NextAction{Tool: "ReadFiles", Instruction: "read the ranges", Arguments: map[string]any{"file_paths": []string{"/w/a.go:1-20"}}}},
			wantError: true,
			wantKeys: []string{`"requiredReads":[{"path":"/w/a.go","ranges":["1-20"]}]`, `"errorCode":"read_required"`, `"nextAction":{"tool":"ReadFiles"`,
				`"retryable":true`, `"retrySameCall":false`},
		},
		{
			name:     "running gets a retry delay",
			env:      mcp.Envelope{Status: mcp.StatusRunning, Tool: "BashCommand", Message: "still running"},
			wantKeys: []string{`"retryAfterMs":1000`, `"retryable":false`, `"retrySameCall":false`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.env.Result("text")
			if res.IsError != tc.wantError {
				t.Errorf("IsError = %v, want %v", res.IsError, tc.wantError)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range tc.wantKeys {
				if !strings.Contains(string(b), k) {
					t.Errorf("result %s lacks %s", b, k)
				}
			}
			for _, k := range tc.wantAbsent {
				if strings.Contains(string(b), k) {
					t.Errorf("result %s has %s, want it left out", b, k)
				}
			}
			// The text block is the text, plus one line with the status and
			// the next call when the call is not plainly completed.
			text := res.Content[0].(*mcp.TextContent).Text
			if tc.env.Status == mcp.StatusCompleted && tc.env.NextAction == nil {
				if text != "text" {
					t.Errorf("text block = %q, want %q", text, "text")
				}
			} else if !strings.HasPrefix(text, "text\nstatus: "+string(tc.env.Status)) {
				t.Errorf("text block = %q, want the text and a status line", text)
			}
			if na := tc.env.NextAction; na != nil && !strings.Contains(text, "next: "+na.Tool) {
				t.Errorf("text block = %q lacks the next action", text)
			}
		})
	}
}

func TestEnvelopeInvariantsPanic(t *testing.T) {
	bad := []mcp.Envelope{
		{Status: "weird", Tool: "X"},
		{Status: mcp.StatusCompleted},
		{Status: mcp.StatusFailed, Tool: "X"},
		{Status: mcp.StatusNeedsRead, Tool: "X", ErrorCode: "read_required"},
	}
	for _, env := range bad {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Envelope%+v.Result did not panic", env)
				}
			}()
			env.Result("x")
		}()
	}
}

func TestEnvelopeOutputSchemaIsStrict(t *testing.T) {
	s := string(mcp.EnvelopeOutputSchema)
	for _, banned := range []string{`"title"`, `"$ref"`, `"format"`, `:true}`} {
		if strings.Contains(s, banned) {
			t.Errorf("output schema contains %s: %s", banned, s)
		}
	}
	var v map[string]any
	if err := json.Unmarshal(mcp.EnvelopeOutputSchema, &v); err != nil || v["type"] != "object" {
		t.Errorf("output schema = %s, want an object schema", s)
	}
}
