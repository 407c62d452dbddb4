// Package oplog owns the operational log of winx serve and winxd: the
// logger that WINX_LOG and WINX_LOG_FORMAT configure, the one-line records
// of a finished tool call or HTTP request, and winxd's size-capped log
// file. It does not own usage telemetry (package mcp/usage) and never
// logs arguments, output, headers or tokens: its records take only names,
// statuses, sizes, durations and a hash of the principal.
package oplog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"time"
)

// Formats of New.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Messages of the records, one per kind, so that a reader filters on msg.
const (
	MsgToolCall    = "tool_call"
	MsgHTTPRequest = "http_request"
	MsgDaemonCall  = "daemon_call"
)

// New is the operational logger writing to w at level (debug, info,
// warn, error; off discards everything) in format (FormatText or
// FormatJSON). An unknown level means info, an unknown format text: the
// configuration has validated both already.
func New(w io.Writer, level, format string) *slog.Logger {
	if level == "off" {
		return slog.New(slog.DiscardHandler)
	}
	var lv slog.Level
	switch level {
	case "debug":
		lv = slog.LevelDebug
	case "warn":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == FormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// PrincipalHash names a principal in logs without its name: the first 12
// hex digits of the SHA-256 of the name. The local (stdio or single-token)
// caller, whose name is empty, is "local".
func PrincipalHash(name string) string {
	if name == "" {
		return "local"
	}
	sum := sha256.Sum256([]byte("winx principal\x00" + name))
	return hex.EncodeToString(sum[:6])
}

// ToolCall is one finished tools/call.
type ToolCall struct {
	Tool      string // the tool's name as called (a short identifier)
	Principal string // the caller's principal name; logged hashed
	Status    string // the result envelope's status, or "protocol_error"
	ErrorCode string // the envelope's error code, if any
	Duration  time.Duration
	Bytes     int    // size of the JSON result
	RequestID string // correlates with the http_request record
}

// maxName bounds the tool name a record repeats: the name comes from the
// caller, and an unknown tool's "name" may be anything it sent.
const maxName = 64

func clip(s string) string {
	if len(s) > maxName {
		return s[:maxName]
	}
	return s
}

// LogToolCall writes c as one info record.
func LogToolCall(l *slog.Logger, c ToolCall) {
	l.LogAttrs(context.Background(), slog.LevelInfo, MsgToolCall,
		slog.String("tool", clip(c.Tool)),
		slog.String("principal", PrincipalHash(c.Principal)),
		slog.String("status", clip(c.Status)),
		slog.String("error_code", clip(c.ErrorCode)),
		slog.Float64("duration_ms", float64(c.Duration.Microseconds())/1000),
		slog.Int("bytes", c.Bytes),
		slog.String("request_id", clip(c.RequestID)))
}

// HTTPRequest is one finished HTTP request.
type HTTPRequest struct {
	Method    string
	Path      string // the URL path only: a query may carry ?token= or ?access_token=
	Status    int
	Duration  time.Duration
	Bytes     int64 // response body bytes written
	RequestID string
}

// LogHTTPRequest writes r as one info record.
func LogHTTPRequest(l *slog.Logger, r HTTPRequest) {
	l.LogAttrs(context.Background(), slog.LevelInfo, MsgHTTPRequest,
		slog.String("method", clip(r.Method)),
		slog.String("path", clip(r.Path)),
		slog.Int("status", r.Status),
		slog.Float64("duration_ms", float64(r.Duration.Microseconds())/1000),
		slog.Int64("bytes", r.Bytes),
		slog.String("request_id", r.RequestID))
}

// DaemonCall is one call winxd answered (daemon.Request, which this
// package does not import so that the daemon need not know the log).
type DaemonCall struct {
	Method    string
	Peer      string // the peer's role: adapter, operator
	KeyHash   string // hash of the session key of an ensure, else ""
	Principal string // the principal the key names; logged hashed
	Outcome   string // ok, spawned, reused, error
	Code      int64  // the wire error code of a failed call
	Duration  time.Duration
	Bytes     int
}

// LogDaemonCall writes c as one info record. A call without a principal
// (list, shutdown, a key of another layout) logs none rather than "local".
func LogDaemonCall(l *slog.Logger, c DaemonCall) {
	principal := ""
	if c.Principal != "" {
		principal = PrincipalHash(c.Principal)
	}
	l.LogAttrs(context.Background(), slog.LevelInfo, MsgDaemonCall,
		slog.String("method", clip(c.Method)),
		slog.String("peer", clip(c.Peer)),
		slog.String("key", clip(c.KeyHash)),
		slog.String("principal", principal),
		slog.String("outcome", clip(c.Outcome)),
		slog.Int64("code", c.Code),
		slog.Float64("duration_ms", float64(c.Duration.Microseconds())/1000),
		slog.Int("bytes", c.Bytes))
}
