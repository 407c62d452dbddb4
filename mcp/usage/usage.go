// Package usage owns the Winx usage log: a private JSON Lines file of one
// record per tool call, its rotation and retention, and the report that
// aggregates it. It does not decide what a call's outcome was, time calls or
// expose the log over the network; the server fills an Entry and calls
// (*Log).Record.
//
// The log never holds command text, file contents, arguments or tokens: Entry
// has no field for them, principals and correlation ids are written only as
// HashID, argument digests only keyed by a secret of the installation, and
// labels that do not look like names are hashed.
package usage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Outcomes of a call as seen by the protocol layer.
const (
	OutcomeOK            = "ok"
	OutcomeToolError     = "tool_error"
	OutcomeProtocolError = "protocol_error"
)

// SchemaVersion is the version of the records Record writes. Version 2
// added the event type, the schema field and the request id; records
// without a schema field are version 1. Version 3 writes the Rust Winx's
// shape and names (winx.go), with the client, the worker limit and
// Initialize's context sizes; the values of version 2 keep their meaning.
const SchemaVersion = 3

// retryCheckSince is the oldest schema whose argument digests and
// statuses the report's retry check can judge.
const retryCheckSince = 2

// Event types of a record.
const (
	EventToolCall    = "tool_call"
	EventHTTPRequest = "http_request"
)

// StatusCompleted is the envelope status of a plain success; any other
// non-empty status marks a call as rejected for the retry check.
const StatusCompleted = "completed"

// MaxLabelLen bounds the tool, status and error code labels written as is;
// longer or odder labels are written hashed.
const MaxLabelLen = 64

var (
	// ErrInsecureFile reports a log path that is a symbolic link, not a
	// regular file, or grants group or other permission bits.
	ErrInsecureFile = errors.New("usage: log file is not a private regular file")
	// ErrClosed reports a Record after Close.
	ErrClosed = errors.New("usage: log is closed")
	// ErrBadOutcome reports an Entry whose Outcome is not one of the Outcome
	// constants.
	ErrBadOutcome = errors.New("usage: outcome is not ok, tool_error or protocol_error")
	// ErrBadRotation reports an Options.Rotation other than daily, hourly or
	// never.
	ErrBadRotation = errors.New("usage: rotation is not daily, hourly or never")
	// ErrBadEvent reports an Entry whose Type is not an event type.
	ErrBadEvent = errors.New("usage: event type is not tool_call or http_request")
)

// FileError is the error Open returns for a file it refuses to write to. It
// wraps ErrInsecureFile.
type FileError struct {
	Path   string
	Mode   fs.FileMode
	Reason string // "not a regular file", "group or other permission bits"
}

func (e *FileError) Error() string {
	return fmt.Sprintf("usage: %s (mode %v): %s", e.Path, e.Mode, e.Reason)
}

func (e *FileError) Unwrap() error { return ErrInsecureFile }

// Entry is what the caller knows about one finished tool call. It has no field
// for arguments, command text, file contents or tokens, by design.
type Entry struct {
	Time time.Time // when the call finished; zero means Options.Now()
	// Type is EventToolCall (the default when empty) or EventHTTPRequest.
	Type string
	// RequestID correlates a tool call with the HTTP request that carried
	// it; written as is (a random id, not derived from anything).
	RequestID string
	// Method, Path and HTTPStatus describe an EventHTTPRequest; the path
	// is the URL path alone (no query, which may carry a token).
	Method        string
	Path          string
	HTTPStatus    int
	Tool          string
	Outcome       string // OutcomeOK, OutcomeToolError or OutcomeProtocolError
	Status        string // envelope status, empty when there was no envelope
	ErrorCode     string
	DurationMs    float64
	ResponseBytes int
	Principal     string // principal name; only HashID(Principal) is written
	// Correlation groups calls of one conversation (a thread id, a session
	// key). Only HashID(Correlation) is written.
	Correlation string
	// ArgsDigest is the caller's keyed digest of the raw arguments (hex
	// HMAC-SHA256 under the installation's ArgsKeyFile), used only to see
	// a rejected call repeated unchanged; its first ArgsDigestLen hex
	// digits are written. The key is what keeps a reader of the log from
	// confirming guessed arguments: with a fixed salt anyone could hash
	// "rm -rf ~" and look for it. Anything that is not a full hex digest
	// is written as HashID, so free text never lands in the log.
	ArgsDigest string
	// Action, Category, Session and Batch are what the tool noted of the
	// call (mcp.CallFacts): labels of a fixed vocabulary and a count,
	// never the command or paths themselves. Empty or 0 when not noted.
	Action   string
	Category string
	Session  string
	Batch    int
	// WorkerLimit, ContextBytes, GuidelinesBytes and InitialFiles are
	// mcp.CallFacts' counts of the same names.
	WorkerLimit, ContextBytes, GuidelinesBytes, InitialFiles int
	// ClientName, ClientVersion and Protocol are what the client declared
	// (clientInfo, the protocol revision); written as labels
	// (clientLabel), so free text is hashed.
	ClientName, ClientVersion, Protocol string
}

// Record is one line of the log as read back, of any schema (its JSON
// names are those of schemas 1 and 2; UnmarshalJSON also reads the Winx
// shape that Log.Record writes since schema 3). Principal and
// Correlation hold HashID values, ArgsDigest a keyed digest, never the
// caller's strings; an operator finds a principal's calls by computing
// HashID of its name.
type Record struct {
	Time          time.Time `json:"time"`
	Type          string    `json:"type,omitempty"`   // EventToolCall or EventHTTPRequest; "" in version 1
	Schema        int       `json:"schema,omitempty"` // SchemaVersion; 0 means version 1
	RequestID     string    `json:"requestId,omitempty"`
	Method        string    `json:"method,omitempty"`
	Path          string    `json:"path,omitempty"`
	HTTPStatus    int       `json:"httpStatus,omitempty"`
	Build         string    `json:"build,omitempty"`
	Tool          string    `json:"tool,omitempty"`
	Outcome       string    `json:"outcome,omitempty"`
	Status        string    `json:"status,omitempty"`
	ErrorCode     string    `json:"errorCode,omitempty"`
	DurationMs    float64   `json:"durationMs"`
	ResponseBytes int       `json:"responseBytes"`
	Principal     string    `json:"principal,omitempty"`
	Correlation   string    `json:"correlation,omitempty"`
	ArgsDigest    string    `json:"argsDigest,omitempty"`
	// Optional facts of a tool call (schema 2 still: a record without
	// them reads as before). Action is BashCommand's action type,
	// Category the class of a command's program, Session "created" or
	// "reused" (Initialize), Batch the file count of ReadFiles/EditFiles.
	Action   string `json:"action,omitempty"`
	Category string `json:"category,omitempty"`
	Session  string `json:"session,omitempty"`
	Batch    int    `json:"batch,omitempty"`
	// Schema 3 on (written in the Winx shape only; see winx.go).
	WorkerLimit     int    `json:"workerLimit,omitempty"`
	ContextBytes    int    `json:"contextBytes,omitempty"`
	GuidelinesBytes int    `json:"guidelinesBytes,omitempty"`
	InitialFiles    int    `json:"initialFiles,omitempty"`
	ClientName      string `json:"clientName,omitempty"`
	ClientVersion   string `json:"clientVersion,omitempty"`
	Protocol        string `json:"protocol,omitempty"`
}

// Version is the record's schema version: 1 for records written before
// the schema field existed.
func (r *Record) Version() int {
	if r.Schema == 0 {
		return 1
	}
	return r.Schema
}

// Rejected reports whether the call did not plainly succeed: a tool or
// protocol error, or an envelope status other than completed.
func (r *Record) Rejected() bool {
	return r.Outcome != OutcomeOK || (r.Status != "" && r.Status != StatusCompleted)
}

// The arguments digest's key: 32 random bytes, hex-encoded, in a 0600 file
// of the state directory, made on first use and checked as the wire secret
// is (a regular file of this user that no one else can read, never a
// symbolic link). One per installation: two installations give the same
// arguments different digests.
const (
	ArgsKeyFileName = "usage-args-key"
	// ArgsDigestLen is how many hex digits of the digest are written.
	ArgsDigestLen = 16
)

// argsDigest is what the log writes of a caller's arguments digest.
func argsDigest(d string) string {
	if len(d) == 2*sha256.Size && strings.Trim(d, "0123456789abcdef") == "" {
		return d[:ArgsDigestLen]
	}
	return hashOrEmpty(d)
}

// HashID returns the first 16 hex digits of sha256("winx-usage\x00" + s): a
// stable, domain-separated id for s that does not reveal it.
func HashID(s string) string {
	sum := sha256.Sum256([]byte("winx-usage\x00" + s))
	return hex.EncodeToString(sum[:8])
}

// hashOrEmpty keeps "no id" distinguishable from the hash of "".
func hashOrEmpty(s string) string {
	if s == "" {
		return ""
	}
	return HashID(s)
}

// label returns s when it looks like a name (at most MaxLabelLen of ASCII
// letters, digits, '_', '-', '.'), and "#" + HashID(s) otherwise,
// so free text passed by mistake (a tool name taken from a malformed request,
// a message as error code) cannot leak into the log.
func label(s string) string {
	if len(s) > MaxLabelLen {
		return "#" + HashID(s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '-', c == '.':
		default:
			return "#" + HashID(s)
		}
	}
	return s
}

// clientLabel is label for what a client calls itself: names like
// "Claude Code" or "cursor-vscode (1.2)" are kept (spaces, parentheses,
// '@', '+', '/' allowed besides the name characters); anything else, or
// longer, is hashed.
func clientLabel(s string) string {
	if len(s) > MaxLabelLen {
		return "#" + HashID(s)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_-. ()@+/", c) >= 0:
		default:
			return "#" + HashID(s)
		}
	}
	return s
}

func validOutcome(s string) bool {
	return s == OutcomeOK || s == OutcomeToolError || s == OutcomeProtocolError
}

// pathLabel is label for a URL path: '/' is allowed besides the name
// characters; anything else is hashed.
func pathLabel(p string) string {
	if len(p) > MaxLabelLen {
		return "#" + HashID(p)
	}
	for _, part := range strings.Split(p, "/") {
		if label(part) != part {
			return "#" + HashID(p)
		}
	}
	return p
}
