package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"winx/jsonrpc"
)

// RequestContext is what a tool, prompt or resource handler may ask of the
// request it serves: who called, which era, progress and log notifications,
// and input from the client (server-to-client requests in legacy eras,
// multi round-trip input_required results in 2026-07-28).
type RequestContext struct {
	ex    *exchange
	input *inputState
	// binding is what a 2026-07-28 requestState must match; nil in legacy.
	binding *sealedState
	// tasks and task are set when the request became a task; input is then
	// asked through the task (tasks/get shows it, tasks/update answers it).
	tasks *taskStore
	task  func() *task
}

// Caller returns the authenticated caller.
func (r *RequestContext) Caller() Caller { return r.ex.caller }

// ProtocolVersion returns the revision the request is served under.
func (r *RequestContext) ProtocolVersion() string { return r.ex.version }

// Modern reports whether the request is a stateless 2026-07-28 request.
func (r *RequestContext) Modern() bool { return r.ex.era == eraModern }

// ClientCapabilities returns what the client declared for this request.
func (r *RequestContext) ClientCapabilities() ClientCapabilities { return r.ex.caps }

// ProgressNotificationParams is notifications/progress.
type ProgressNotificationParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// Progress reports progress when the client asked for it with a
// progressToken; otherwise it does nothing.
func (r *RequestContext) Progress(progress float64, total *float64, message string) error {
	if len(r.ex.progressToken) == 0 || r.ex.out == nil {
		return nil
	}
	return r.ex.out.notify("notifications/progress", &ProgressNotificationParams{
		ProgressToken: r.ex.progressToken, Progress: progress, Total: total, Message: message,
	})
}

// LogMessageParams is notifications/message.
type LogMessageParams struct {
	Level  LoggingLevel `json:"level"`
	Logger string       `json:"logger,omitempty"`
	Data   any          `json:"data"`
}

// Log sends a log notification if the client's level admits it: the legacy
// connection's level (set by logging/setLevel) or the request's _meta
// logLevel (modern; absent means none).
func (r *RequestContext) Log(level LoggingLevel, logger string, data any) error {
	threshold := r.ex.logLevel
	if r.ex.era == eraLegacy && r.ex.legacy != nil {
		_, _, threshold = r.ex.legacy.snapshot()
	}
	if threshold == "" || !threshold.allows(level) || r.ex.out == nil {
		return nil
	}
	return r.ex.out.notify("notifications/message", &LogMessageParams{Level: level, Logger: logger, Data: data})
}

// errInputRequired unwinds a 2026-07-28 handler that needs client input; the
// server answers with an input_required result.
var errInputRequired = errors.New("mcp: input required")

// IsInputRequired reports whether err is the unwinding of a handler that asked
// for input it does not have yet. Handlers must return such errors unchanged.
func IsInputRequired(err error) bool { return errors.Is(err, errInputRequired) }

// capabilityFor names the client capability an input request needs.
func capabilityFor(method string) (string, error) {
	switch method {
	case "elicitation/create":
		return "elicitation", nil
	case "sampling/createMessage":
		return "sampling", nil
	case "roots/list":
		return "roots", nil
	}
	return "", fmt.Errorf("mcp: %q cannot be an input request", method)
}

// Input asks the client for every request in reqs, keyed by a name unique
// within this request, and returns the client's results by the same keys.
//
// Legacy eras send each as a server-to-client request and wait. 2026-07-28
// returns the answers the client already supplied (in inputResponses, or
// carried in the sealed requestState from earlier rounds); if any is missing,
// it records the missing ones and returns an error for which IsInputRequired
// holds, which the handler must return so the server can ask.
func (r *RequestContext) Input(ctx context.Context, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	for _, key := range sortedKeys(reqs) {
		capability, err := capabilityFor(reqs[key].Method)
		if err != nil {
			return nil, err
		}
		if !r.ex.caps.Has(capability) {
			return nil, jsonrpc.NewErrorWithData(CodeMissingRequiredClientCapability,
				"client does not support "+capability,
				map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}})
		}
	}
	out := make(map[string]json.RawMessage, len(reqs))
	if t := r.task(); t != nil {
		return r.tasks.ask(ctx, t, reqs)
	}
	if r.ex.era == eraLegacy {
		for _, key := range sortedKeys(reqs) {
			res, err := r.ex.out.call(ctx, reqs[key].Method, reqs[key].params())
			if err != nil {
				return nil, err
			}
			out[key] = res
		}
		return out, nil
	}
	missing := false
	for key, ir := range reqs {
		if resp, ok := r.input.responses[key]; ok {
			out[key] = resp
			continue
		}
		r.input.pending[key] = ir
		missing = true
	}
	if missing {
		return nil, errInputRequired
	}
	return out, nil
}

// inputState is a 2026-07-28 request's MRTR bookkeeping.
type inputState struct {
	// responses are the answers known for this attempt: earlier rounds' from
	// the sealed state, then this request's inputResponses.
	responses map[string]json.RawMessage
	// pending are input requests the handler asked for and did not get.
	pending map[string]InputRequest
}

// inputParams are the MRTR fields a retried request may carry.
type inputParams struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

// sealedState is what requestState carries between rounds. It binds the blob
// to the caller, the method and target, and the exact arguments, so a blob
// cannot be replayed elsewhere.
type sealedState struct {
	Principal string                     `json:"p"`
	Method    string                     `json:"m"`
	Target    string                     `json:"t"`
	ArgsHash  string                     `json:"a"`
	Expires   int64                      `json:"e"`
	Responses map[string]json.RawMessage `json:"r,omitempty"`
}

// stateSealer signs requestState blobs with HMAC-SHA256.
type stateSealer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// maxRequestStateLen bounds an incoming requestState before any decoding.
const maxRequestStateLen = 1 << 20

func (s *stateSealer) seal(st *sealedState) string {
	st.Expires = s.now().Add(s.ttl).Unix()
	payload := mustMarshal(st)
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// errBadRequestState is the one answer to a blob that fails any check: the
// client learns nothing about which check failed.
var errBadRequestState = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid or expired requestState")

func (s *stateSealer) open(blob string, want *sealedState) (*sealedState, error) {
	if len(blob) > maxRequestStateLen {
		return nil, errBadRequestState
	}
	var payloadPart, macPart string
	for i := 0; i < len(blob); i++ {
		if blob[i] == '.' {
			payloadPart, macPart = blob[:i], blob[i+1:]
			break
		}
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(payloadPart)
	sum, err2 := base64.RawURLEncoding.DecodeString(macPart)
	if err1 != nil || err2 != nil || len(payload) == 0 {
		return nil, errBadRequestState
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return nil, errBadRequestState
	}
	var st sealedState
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, errBadRequestState
	}
	if s.now().Unix() > st.Expires || st.Principal != want.Principal || st.Method != want.Method ||
		st.Target != want.Target || st.ArgsHash != want.ArgsHash {
		return nil, errBadRequestState
	}
	return &st, nil
}

func hashArgs(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// newRequestContext builds a handler's context; for 2026-07-28 it opens the
// requestState (if any) and merges the input responses.
func (s *Server) newRequestContext(ex *exchange, method, target string, args, params json.RawMessage) (*RequestContext, error) {
	rc := &RequestContext{ex: ex, tasks: s.tasks, task: func() *task { return nil }}
	if ex.era != eraModern {
		return rc, nil
	}
	var ip inputParams
	if err := decodeParams(params, &ip); err != nil {
		return nil, err
	}
	binding := &sealedState{Principal: ex.caller.Principal, Method: method, Target: target, ArgsHash: hashArgs(args)}
	rc.input = &inputState{responses: map[string]json.RawMessage{}, pending: map[string]InputRequest{}}
	if ip.RequestState != nil {
		st, err := s.state.open(*ip.RequestState, binding)
		if err != nil {
			return nil, err
		}
		for k, v := range st.Responses {
			rc.input.responses[k] = v
		}
	}
	for k, v := range ip.InputResponses {
		if len(v) == 0 || v[0] != '{' {
			return nil, invalidParams("inputResponses[%q] must be an object", k)
		}
		rc.input.responses[k] = v
	}
	rc.binding = binding
	return rc, nil
}

// inputRequired builds the answer to a handler that asked for input.
func (s *Server) inputRequired(rc *RequestContext) *InputRequiredResult {
	binding := rc.binding
	binding.Responses = rc.input.responses
	return &InputRequiredResult{
		ResultHeader:  ResultHeader{ResultType: ResultInputRequired},
		InputRequests: rc.input.pending,
		RequestState:  s.state.seal(binding),
	}
}

// ToolRequest is a tools/call in flight.
type ToolRequest struct {
	RequestContext
	Name      string
	Arguments json.RawMessage
	promotion *promotion // nil when the call cannot become a task
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Task      json.RawMessage `json:"task"`
}

// decodeCallToolParams reads tools/call params as decodeParams would, but
// decodes only the name and finds arguments and task without scanning them:
// params were validated with their message, and the tool decodes its
// arguments itself, so a large call is scanned once here, not twice more.
func decodeCallToolParams(params json.RawMessage) (callToolParams, error) {
	var p callToolParams
	if len(params) == 0 {
		return p, nil
	}
	err := jsonrpc.Members(params, func(name string, v []byte) bool {
		switch {
		case strings.EqualFold(name, "arguments"):
			p.Arguments = v
		case strings.EqualFold(name, "task"):
			p.Task = v
		}
		return true
	})
	if err != nil {
		return p, invalidParams("invalid params: %v", err)
	}
	if raw, _ := memberFold(params, "name"); raw != nil {
		if err := json.Unmarshal(raw, &p.Name); err != nil {
			return p, invalidParams("invalid params: %v", err)
		}
	}
	if string(p.Arguments) == "null" {
		p.Arguments = nil
	}
	if string(p.Task) == "null" {
		p.Task = nil
	}
	return p, nil
}

func (s *Server) callTool(ctx context.Context, ex *exchange, params json.RawMessage) (result, error) {
	p, err := decodeCallToolParams(params)
	if err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, invalidParams("tools/call: name is required")
	}
	rt, ok := s.registry.lookupTool(ex.caller.Profile, p.Name)
	if !ok {
		return nil, invalidParams("unknown tool %q", p.Name)
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return nil, invalidParams("tools/call: arguments must be an object")
	}
	rc, err := s.newRequestContext(ex, "tools/call", p.Name, args, params)
	if err != nil {
		return nil, err
	}
	tr := &ToolRequest{RequestContext: *rc, Name: p.Name, Arguments: args}
	tr.task = tr.currentTask
	if res, ok, err := s.maybeStartTask(ctx, ex, rt, tr, p.Task); ok || err != nil {
		return res, err
	}
	res, err := runTool(ctx, rt, tr)
	return s.toolResult(tr, res, err)
}

// runTool runs a tool's handler, with the request's CPU share paused while
// a tool that waits runs.
func runTool(ctx context.Context, rt *registeredTool, tr *ToolRequest) (*CallToolResult, error) {
	if share := cpuShareOf(ctx); share != nil && rt.tool.Waits {
		share.Pause()
		defer share.Resume(ctx)
	}
	return rt.handler(ctx, tr)
}

// CPUShare is the share of the server's CPU a transport runs a request
// under (the HTTP admission gate's per-principal run slots): Pause gives it
// back while the request waits, Resume waits for the request's turn to
// compute again.
type CPUShare interface {
	Pause()
	Resume(context.Context)
}

type cpuShareKey struct{}

// WithCPUShare returns ctx carrying the request's CPU share.
func WithCPUShare(ctx context.Context, s CPUShare) context.Context {
	return context.WithValue(ctx, cpuShareKey{}, s)
}

func cpuShareOf(ctx context.Context) CPUShare {
	s, _ := ctx.Value(cpuShareKey{}).(CPUShare)
	return s
}

// toolResult turns a handler's return into the answer of a call that did not
// become a task.
func (s *Server) toolResult(tr *ToolRequest, res *CallToolResult, err error) (result, error) {
	if IsInputRequired(err) && tr.binding != nil {
		return s.inputRequired(&tr.RequestContext), nil
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("mcp: tool %q returned no result", tr.Name)
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return &callToolWire{CallToolResult: res}, nil
}

// PromptRequest is a prompts/get in flight.
type PromptRequest struct {
	RequestContext
	Name      string
	Arguments map[string]string
}

type getPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

func (s *Server) getPrompt(ctx context.Context, ex *exchange, params json.RawMessage) (result, error) {
	var p getPromptParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	rp, ok := s.registry.promptIndex[p.Name]
	if !ok {
		return nil, invalidParams("unknown prompt %q", p.Name)
	}
	for _, a := range rp.prompt.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			return nil, invalidParams("prompt %q: missing required argument %q", p.Name, a.Name)
		}
	}
	args := mustMarshal(p.Arguments)
	rc, err := s.newRequestContext(ex, "prompts/get", p.Name, args, params)
	if err != nil {
		return nil, err
	}
	pr := &PromptRequest{RequestContext: *rc, Name: p.Name, Arguments: p.Arguments}
	res, err := rp.handler(ctx, pr)
	if IsInputRequired(err) && rc.binding != nil {
		return s.inputRequired(rc), nil
	}
	if err != nil {
		return nil, err
	}
	return &getPromptWire{GetPromptResult: res}, nil
}

// ResourceRequest is a resources/read in flight.
type ResourceRequest struct {
	RequestContext
	URI string
}

type readResourceParams struct {
	URI string `json:"uri"`
}

func (s *Server) readResource(ctx context.Context, ex *exchange, params json.RawMessage) (result, error) {
	var p readResourceParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, invalidParams("resources/read: uri is required")
	}
	h, ok := s.registry.findResource(p.URI)
	if !ok {
		return nil, resourceNotFound(ex, p.URI)
	}
	rc, err := s.newRequestContext(ex, "resources/read", p.URI, json.RawMessage("{}"), params)
	if err != nil {
		return nil, err
	}
	rr := &ResourceRequest{RequestContext: *rc, URI: p.URI}
	res, err := h(ctx, rr)
	if IsInputRequired(err) && rc.binding != nil {
		return s.inputRequired(rc), nil
	}
	if errors.Is(err, ErrResourceNotFound) {
		return nil, resourceNotFound(ex, p.URI)
	}
	if err != nil {
		return nil, err
	}
	return &readResourceWire{ReadResourceResult: res}, nil
}
