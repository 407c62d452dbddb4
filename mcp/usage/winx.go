package usage

import (
	"bytes"
	"encoding/json"
	"time"
)

// The records Record writes since schema 3 have the Rust Winx's shape, so
// a Winx user's recipes (its guide's jq latency recipe:
// select(.fields.event == "tool_call") | .fields | {tool, duration_ms})
// work unchanged: a tracing-JSON event with a top-level timestamp, level
// and target, and the record's values in a "fields" object under Winx's
// names. Values Winx does not have keep this log's meaning under names of
// the same style (args_digest, conversation_id, http_status). Records of
// schemas 1 and 2 (flat objects with camelCase names) are still read.

// Winx's constants of a usage event.
const (
	lineLevel  = "INFO"
	lineTarget = "winx::usage"
)

// Messages of the two events, as tracing writes an event's message.
const (
	messageToolCall    = "tool call"
	messageHTTPRequest = "http request"
)

// line is one record as written: the tracing envelope.
type line struct {
	Timestamp string `json:"timestamp"`
	Level     string `json:"level"`
	Fields    any    `json:"fields"`
	Target    string `json:"target"`
}

// toolCallFields are a tool_call record's fields, in Winx's names.
type toolCallFields struct {
	Message        string  `json:"message"`
	Event          string  `json:"event"`
	Schema         int     `json:"usage_schema"`
	Tool           string  `json:"tool"`
	Action         string  `json:"action"`
	CommandKind    string  `json:"command_kind"`
	Principal      string  `json:"principal"`
	ConversationID string  `json:"conversation_id"`
	RequestID      string  `json:"request_id"`
	ClientName     string  `json:"client_name"`
	ClientVersion  string  `json:"client_version"`
	Protocol       string  `json:"protocol"`
	Build          string  `json:"build"`
	BatchItems     int     `json:"batch_items"`
	WorkerLimit    int     `json:"worker_limit"`
	ErrorCode      string  `json:"error_code"`
	ResultStatus   string  `json:"result_status"`
	ResponseBytes  int     `json:"response_bytes"`
	DurationMs     float64 `json:"duration_ms"`
	Outcome        string  `json:"outcome"`
	ArgsDigest     string  `json:"args_digest,omitempty"`
	// Initialize's, as Winx writes them on its Initialize records only.
	*initializeFields
}

// initializeFields are the fields only an Initialize record carries.
type initializeFields struct {
	Transition      string `json:"initialize_transition"` // "created" or "reused"
	Reused          bool   `json:"initialize_reused"`
	ContextBytes    int    `json:"context_bytes"`
	GuidelinesBytes int    `json:"guidelines_bytes"`
	InitialFiles    int    `json:"initial_files_count"`
}

// httpFields are an http_request record's fields.
type httpFields struct {
	Message       string  `json:"message"`
	Event         string  `json:"event"`
	Schema        int     `json:"usage_schema"`
	RequestID     string  `json:"request_id"`
	Method        string  `json:"method"`
	Path          string  `json:"path"`
	HTTPStatus    int     `json:"http_status"`
	Build         string  `json:"build"`
	ResponseBytes int     `json:"response_bytes"`
	DurationMs    float64 `json:"duration_ms"`
}

// marshalLine encodes r as a line of the current schema.
func marshalLine(r *Record) ([]byte, error) {
	l := line{Timestamp: r.Time.UTC().Format(time.RFC3339Nano), Level: lineLevel, Target: lineTarget}
	if r.Type == EventHTTPRequest {
		l.Fields = httpFields{
			Message: messageHTTPRequest, Event: r.Type, Schema: r.Schema, RequestID: r.RequestID,
			Method: r.Method, Path: r.Path, HTTPStatus: r.HTTPStatus, Build: r.Build,
			ResponseBytes: r.ResponseBytes, DurationMs: r.DurationMs,
		}
	} else {
		f := toolCallFields{
			Message: messageToolCall, Event: r.Type, Schema: r.Schema, Tool: r.Tool, Action: r.Action,
			CommandKind: r.Category, Principal: r.Principal, ConversationID: r.Correlation, RequestID: r.RequestID,
			ClientName: r.ClientName, ClientVersion: r.ClientVersion, Protocol: r.Protocol, Build: r.Build,
			BatchItems: r.Batch, WorkerLimit: r.WorkerLimit, ErrorCode: r.ErrorCode, ResultStatus: r.Status,
			ResponseBytes: r.ResponseBytes, DurationMs: r.DurationMs, Outcome: r.Outcome, ArgsDigest: r.ArgsDigest,
		}
		if r.Session != "" {
			f.initializeFields = &initializeFields{Transition: r.Session, Reused: r.Session == "reused",
				ContextBytes: r.ContextBytes, GuidelinesBytes: r.GuidelinesBytes, InitialFiles: r.InitialFiles}
		}
		l.Fields = f
	}
	return json.Marshal(l)
}

// readFields is the union of both events' fields, as read back.
type readFields struct {
	toolCallFields
	initializeFields
	Method     string `json:"method"`
	Path       string `json:"path"`
	HTTPStatus int    `json:"http_status"`
}

// UnmarshalJSON reads a line of any schema: the Winx shape (schema 3 on)
// or the flat objects of schemas 1 and 2.
func (r *Record) UnmarshalJSON(b []byte) error {
	var probe struct {
		Timestamp *string         `json:"timestamp"`
		Fields    json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.Fields == nil || probe.Timestamp == nil {
		type flat Record // the schema 1 and 2 names, without this method
		var f flat
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		*r = Record(f)
		return nil
	}
	var f readFields
	dec := json.NewDecoder(bytes.NewReader(probe.Fields))
	if err := dec.Decode(&f); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, *probe.Timestamp)
	if err != nil {
		return err
	}
	tc := &f.toolCallFields
	*r = Record{
		Time: t, Type: tc.Event, Schema: tc.Schema, RequestID: tc.RequestID, Method: f.Method, Path: f.Path,
		HTTPStatus: f.HTTPStatus, Build: tc.Build, Tool: tc.Tool, Outcome: tc.Outcome, Status: tc.ResultStatus,
		ErrorCode: tc.ErrorCode, DurationMs: tc.DurationMs, ResponseBytes: tc.ResponseBytes, Principal: tc.Principal,
		Correlation: tc.ConversationID, ArgsDigest: tc.ArgsDigest, Action: tc.Action, Category: tc.CommandKind,
		Session: f.initializeFields.Transition, Batch: tc.BatchItems, WorkerLimit: tc.WorkerLimit,
		ClientName: tc.ClientName, ClientVersion: tc.ClientVersion, Protocol: tc.Protocol,
		ContextBytes: f.initializeFields.ContextBytes, GuidelinesBytes: f.initializeFields.GuidelinesBytes,
		InitialFiles: f.initializeFields.InitialFiles,
	}
	if r.Type == "" {
		r.Type = EventToolCall // a Winx line without our event names is a call
	}
	return nil
}
