package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"winx/jsonrpc"
)

// ToolCallRecord describes one finished tools/call for telemetry. It holds
// no arguments, output or credentials: only what the call was, how it ended
// and how long it took. ArgsDigest and Correlation identify repeats and
// conversations; an observer must not store them unhashed.
type ToolCallRecord struct {
	Tool        string
	Principal   string
	Correlation string // the call's thread_id argument, if any
	ArgsDigest  string // hex HMAC-SHA256 of the raw arguments under ServerOptions.ArgsKey; "" without a key
	// RequestID correlates the call with the transport's record of the
	// request that carried it: the id WithRequestID put in the context, else
	// a fresh one (stdio).
	RequestID     string
	Duration      time.Duration
	ResponseBytes int
	// ProtocolError is set when the call failed as a JSON-RPC error;
	// IsError when it returned a tool error result.
	ProtocolError bool
	IsError       bool
	// Status and ErrorCode come from the result's Envelope, if it has one.
	Status    string
	ErrorCode string
	// Facts are what the tool noted of the call (NoteCall); zero when it
	// noted nothing or ran it as a task after answering.
	Facts CallFacts
	// ClientName, ClientVersion and Protocol are what the client declared:
	// its clientInfo and the protocol revision of the exchange.
	ClientName, ClientVersion string
	Protocol                  string
}

// CallFacts are what a tool tells telemetry about one call beyond how it
// ended, each from a small fixed vocabulary the tool documents: never
// arguments, command text or paths.
type CallFacts struct {
	// Action is the kind of request within the tool (BashCommand's
	// action type: command, status_check, send_text, ...).
	Action string
	// Category classifies what a command runs (BashCommand: build, test,
	// vcs, search, read, edit, other).
	Category string
	// Session says whether the call started a Winx session (package
	// mcp/session: a workspace's shell and state; SessionCreated) or
	// attached to a running one (SessionReused).
	Session string
	// Batch is how many items the call carried (files of ReadFiles or
	// EditFiles); 0 when the tool has no batch.
	Batch int
	// WorkerLimit is how many items the call may work on at once
	// (ReadFiles: WINX_READ_PARALLELISM); 0 when the tool has no pool.
	WorkerLimit int
	// ContextBytes and InitialFiles are Initialize's: the bytes of
	// workspace context the answer showed (overview, guideline files,
	// resumed task) and how many initial files it was asked to show.
	// GuidelinesBytes is the part of ContextBytes that guideline files took.
	ContextBytes    int
	GuidelinesBytes int
	InitialFiles    int
}

// Session values of CallFacts.
const (
	SessionCreated = "created"
	SessionReused  = "reused"
)

type factsKey struct{}

// factsBox holds the facts of one call; a tool may note from several
// goroutines (ReadFiles reads in parallel).
type factsBox struct {
	mu    sync.Mutex
	facts CallFacts
	// outcome is how the call ended, read from the result before it was
	// encoded; nil when the result is of a kind outcomeOf does not know.
	outcome *callOutcome
}

// callOutcome is what the record takes from a result: its isError and its
// Envelope's status and errorCode.
type callOutcome struct {
	isError           bool
	status, errorCode string
}

// outcomeOf reads the outcome of a tools/call result as decoding its JSON
// would: nil unless res is a plain tool result whose structured content is
// an Envelope (or none) with valid UTF-8 codes, which the encoder writes
// unchanged.
func outcomeOf(res result) *callOutcome {
	w, ok := res.(*callToolWire)
	if !ok || w.CallToolResult == nil {
		return nil
	}
	o := &callOutcome{isError: w.IsError}
	switch e := w.StructuredContent.(type) {
	case nil:
	case Envelope:
		o.status, o.errorCode = string(e.Status), e.ErrorCode
	case *Envelope:
		if e != nil {
			o.status, o.errorCode = string(e.Status), e.ErrorCode
		}
	default:
		return nil
	}
	if !utf8.ValidString(o.status) || !utf8.ValidString(o.errorCode) {
		return nil
	}
	return o
}

// noteOutcome keeps the outcome of res in the facts box of ctx, if any.
func noteOutcome(ctx context.Context, res result) {
	box, _ := ctx.Value(factsKey{}).(*factsBox)
	if box == nil {
		return
	}
	o := outcomeOf(res)
	box.mu.Lock()
	box.outcome = o
	box.mu.Unlock()
}

func (b *factsBox) getOutcome() *callOutcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.outcome
}

// NoteCall adds f to the facts of the tool call served under ctx: its
// non-zero fields replace the ones noted before. Without an observer (no
// usage log, no operational log) it does nothing.
func NoteCall(ctx context.Context, f CallFacts) {
	box, _ := ctx.Value(factsKey{}).(*factsBox)
	if box == nil {
		return
	}
	box.mu.Lock()
	defer box.mu.Unlock()
	if f.Action != "" {
		box.facts.Action = f.Action
	}
	if f.Category != "" {
		box.facts.Category = f.Category
	}
	if f.Session != "" {
		box.facts.Session = f.Session
	}
	if f.Batch != 0 {
		box.facts.Batch = f.Batch
	}
	if f.WorkerLimit != 0 {
		box.facts.WorkerLimit = f.WorkerLimit
	}
	if f.ContextBytes != 0 {
		box.facts.ContextBytes = f.ContextBytes
	}
	if f.GuidelinesBytes != 0 {
		box.facts.GuidelinesBytes = f.GuidelinesBytes
	}
	if f.InitialFiles != 0 {
		box.facts.InitialFiles = f.InitialFiles
	}
}

func (b *factsBox) get() CallFacts {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.facts
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying id, the request id of the tool calls
// served under ctx (see ToolCallRecord.RequestID). The HTTP layer of the
// binary sets one per request, so its request log and the tool call
// records correlate.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id WithRequestID put in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewRequestID returns a fresh request id: 16 random hex digits.
func NewRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// observeToolCall runs one tools/call dispatch and reports it.
func (s *Server) observeToolCall(ctx context.Context, ex *exchange, req *jsonrpc.Request) (json.RawMessage, error) {
	start := time.Now()
	box := &factsBox{}
	b, err := s.dispatchResult(context.WithValue(ctx, factsKey{}, box), ex, req)
	// The name, arguments and thread_id are found without decoding the
	// arguments again: they were validated with the message, and scanning
	// a large call twice more only to log it is CPU the caller chose.
	var p struct {
		Name      string
		Arguments json.RawMessage
	}
	if raw, err := memberFold(req.Params, "name"); err == nil && raw != nil {
		_ = json.Unmarshal(raw, &p.Name)
	}
	p.Arguments, _ = memberFold(req.Params, "arguments")
	rec := ToolCallRecord{Tool: p.Name, Principal: ex.caller.Principal, Duration: time.Since(start), ResponseBytes: len(b), RequestID: RequestID(ctx)}
	if rec.RequestID == "" {
		rec.RequestID = NewRequestID()
	}
	rec.Protocol = ex.version
	if ex.clientInfo != nil {
		rec.ClientName, rec.ClientVersion = ex.clientInfo.Name, ex.clientInfo.Version
	}
	if len(s.opts.ArgsKey) > 0 {
		mac := hmac.New(sha256.New, s.opts.ArgsKey)
		mac.Write(p.Arguments)
		rec.ArgsDigest = hex.EncodeToString(mac.Sum(nil))
	}
	if raw, err := memberFold(p.Arguments, "thread_id"); err == nil && raw != nil {
		var thread string
		if json.Unmarshal(raw, &thread) == nil {
			rec.Correlation = thread
		}
	}
	if err != nil {
		rec.ProtocolError = true
	} else if o := box.getOutcome(); o != nil {
		// Known before encoding: a large answer is not decoded again.
		rec.IsError, rec.Status, rec.ErrorCode = o.isError, o.status, o.errorCode
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
	rec.Facts = box.get()
	s.opts.ToolObserver(rec)
	return b, err
}
