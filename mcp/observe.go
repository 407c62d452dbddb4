package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"winx/jsonrpc"
)

// ToolCallRecord describes one finished tools/call for telemetry. It holds
// no arguments, output or credentials: only what the call was, how it ended
// and how long it took. ArgsDigest and Correlation identify repeats and
// conversations; an observer must not store them unhashed.
type ToolCallRecord struct {
	Tool          string
	Principal     string
	Correlation   string // the call's thread_id argument, if any
	ArgsDigest    string // hex sha256 of the raw arguments
	Duration      time.Duration
	ResponseBytes int
	// ProtocolError is set when the call failed as a JSON-RPC error;
	// IsError when it returned a tool error result.
	ProtocolError bool
	IsError       bool
	// Status and ErrorCode come from the result's Envelope, if it has one.
	Status    string
	ErrorCode string
}

// observeToolCall runs one tools/call dispatch and reports it.
func (s *Server) observeToolCall(ctx context.Context, ex *exchange, req *jsonrpc.Request) (json.RawMessage, error) {
	start := time.Now()
	b, err := s.dispatchResult(ctx, ex, req)
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &p)
	rec := ToolCallRecord{Tool: p.Name, Principal: ex.caller.Principal, Duration: time.Since(start), ResponseBytes: len(b)}
	sum := sha256.Sum256(p.Arguments)
	rec.ArgsDigest = hex.EncodeToString(sum[:])
	var binding struct {
		ThreadID string `json:"thread_id"`
	}
	if json.Unmarshal(p.Arguments, &binding) == nil {
		rec.Correlation = binding.ThreadID
	}
	if err != nil {
		rec.ProtocolError = true
	} else {
		var out struct {
			IsError    bool `json:"isError"`
			Structured struct {
				Status    string `json:"status"`
				ErrorCode string `json:"errorCode"`
			} `json:"structuredContent"`
		}
		if json.Unmarshal(b, &out) == nil {
			rec.IsError, rec.Status, rec.ErrorCode = out.IsError, out.Structured.Status, out.Structured.ErrorCode
		}
	}
	s.opts.ToolObserver(rec)
	return b, err
}
