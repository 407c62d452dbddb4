package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"winx/jsonrpc"
)

// ServerOptions configures a Server; the zero value (or nil) means defaults.
type ServerOptions struct {
	// Instructions are returned by initialize and server/discover.
	Instructions string
	// Logger receives diagnostics; nil discards them. Never stdout on stdio.
	Logger *slog.Logger
	// ListTTL is the ttlMs advertised on cacheable results (default 60 s).
	ListTTL time.Duration
	// StateKey authenticates MRTR requestState blobs; nil means a fresh
	// random key per process, which makes blobs die with the process.
	StateKey []byte
	// StateTTL bounds how long a requestState blob is accepted (default 10 min).
	StateTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ToolObserver, when set, is told of every finished tools/call (usage
	// telemetry). It runs on the request's goroutine and must not block.
	ToolObserver func(ToolCallRecord)
	// ArgsKey keys ToolCallRecord.ArgsDigest (HMAC-SHA256 of the raw
	// arguments); nil leaves the digest empty. A digest without a secret
	// key would let whoever reads a record confirm guessed arguments.
	ArgsKey []byte
}

// Server dispatches MCP requests of both eras to a Registry. It holds no
// per-connection state: transports own the legacy connections (legacyconn.go)
// and pass them in.
type Server struct {
	info     Implementation
	registry *Registry
	opts     ServerOptions
	logger   *slog.Logger
	state    *stateSealer
	tasks    *taskStore
	subs     *subscriptionHub
	table    map[string]*route // the method table (routes.go); read-only after NewServer
}

// NewServer returns a server for the registry. The registry must not change
// afterwards.
func NewServer(info Implementation, registry *Registry, opts *ServerOptions) *Server {
	s := &Server{info: info, registry: registry}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.ListTTL <= 0 {
		s.opts.ListTTL = time.Minute
	}
	if s.opts.StateTTL <= 0 {
		s.opts.StateTTL = 10 * time.Minute
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	key := s.opts.StateKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("mcp: no randomness for the state key: " + err.Error())
		}
	}
	s.state = &stateSealer{key: key, ttl: s.opts.StateTTL, now: s.opts.Now}
	s.tasks = newTaskStore(s.opts.Now)
	s.subs = newSubscriptionHub()
	s.table = routeTable(s.routes())
	return s
}

// Info returns the server's implementation description.
func (s *Server) Info() Implementation { return s.info }

// Registry returns the registry served.
func (s *Server) Registry() *Registry { return s.registry }

// era is which rule set a request is served under.
type era int

const (
	eraLegacy era = iota
	eraModern
)

// outbound is how a request talks back to its client before it answers:
// notifications on the request's own stream, and (legacy only) server-to-
// client requests whose answers come back through the same transport.
type outbound interface {
	notify(method string, params any) error
	call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// Caller is who sent a request: filled by the transport from authentication.
type Caller struct {
	// Principal is the authenticated name ("" for the local stdio user).
	Principal string
	// Profile filters the tools the caller may discover and call.
	Profile Profile
	// Conversation identifies the HTTP conversation (its Mcp-Session-Id,
	// else its X-Winx-Conversation-Id header); "" on stdio.
	Conversation string
	// Roots are the canonical directories the caller may Initialize or
	// reach with file tools (a principal's allowed_roots); nil means
	// unrestricted.
	Roots []string
}

// exchange is one request in flight with everything its handler may use.
type exchange struct {
	era           era
	version       string
	caps          ClientCapabilities
	clientInfo    *Implementation
	logLevel      LoggingLevel // "" sends no log notifications
	progressToken json.RawMessage
	caller        Caller
	legacy        *legacyConn // legacy era only; nil in the modern era
	out           outbound
	method        string
	id            jsonrpc.ID
}

// requestMeta is the _meta object of a request, kept raw per key.
type requestMeta map[string]json.RawMessage

type paramsWithMeta struct {
	Meta requestMeta `json:"_meta"`
}

func decodeMeta(params json.RawMessage) (requestMeta, error) {
	if len(params) == 0 {
		return nil, nil
	}
	// Only _meta is decoded: params were validated with their message,
	// and a large tools/call is not scanned again to find its _meta.
	raw, err := memberFold(params, "_meta")
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params must be an object")
	}
	var meta requestMeta
	if raw != nil && json.Unmarshal(raw, &meta) != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "params must be an object")
	}
	return meta, nil
}

// memberFold is the member of the valid JSON object obj that
// json.Unmarshal would decode into a struct field tagged name: the last
// whose name matches case-insensitively; nil when none does. It finds it
// without scanning the other members' values, which may be large.
func memberFold(obj json.RawMessage, name string) (json.RawMessage, error) {
	var out json.RawMessage
	err := jsonrpc.Members(obj, func(n string, v []byte) bool {
		if strings.EqualFold(n, name) {
			out = v
		}
		return true
	})
	return out, err
}

// ModernVersionOf returns the protocol version a request's _meta names, or ""
// when the request is not a 2026-07-28-style stateless request.
func ModernVersionOf(params json.RawMessage) string {
	meta, err := decodeMeta(params)
	if err != nil || meta == nil {
		return ""
	}
	var v string
	if raw, ok := meta[MetaProtocolVersion]; ok && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return ""
}

// hasModernMeta reports whether a request's _meta names a protocol version,
// which makes it a stateless request whatever its method.
func hasModernMeta(params json.RawMessage) bool {
	meta, err := decodeMeta(params)
	if err != nil {
		return false
	}
	_, ok := meta[MetaProtocolVersion]
	return ok
}

// prepareModern validates a stateless request's _meta and builds its exchange.
func (s *Server) prepareModern(req *jsonrpc.Request, meta requestMeta, caller Caller, out outbound) (*exchange, error) {
	var version string
	if err := json.Unmarshal(meta[MetaProtocolVersion], &version); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "_meta."+MetaProtocolVersion+" must be a string")
	}
	if !isModernVersion(version) {
		return nil, unsupportedVersionError(version)
	}
	ex := &exchange{era: eraModern, version: version, caller: caller, out: out, method: req.Method, id: req.ID}
	rawCaps, ok := meta[MetaClientCapabilities]
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "_meta."+MetaClientCapabilities+" is required")
	}
	if err := json.Unmarshal(rawCaps, &ex.caps); err != nil || ex.caps == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "_meta."+MetaClientCapabilities+" must be an object")
	}
	if raw, ok := meta[MetaClientInfo]; ok {
		var info Implementation
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "_meta."+MetaClientInfo+" must be an Implementation")
		}
		ex.clientInfo = &info
	}
	if raw, ok := meta[MetaLogLevel]; ok {
		var level LoggingLevel
		if err := json.Unmarshal(raw, &level); err != nil || !level.valid() {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "_meta."+MetaLogLevel+" is not a logging level")
		}
		ex.logLevel = level
	}
	ex.progressToken = meta["progressToken"]
	return ex, nil
}

func unsupportedVersionError(requested string) *jsonrpc.Error {
	return jsonrpc.NewErrorWithData(CodeUnsupportedProtocolVersion, "unsupported protocol version",
		map[string]any{"supported": SupportedVersions(), "requested": requested})
}

// prepareLegacy builds the exchange of a request on a legacy connection.
func (s *Server) prepareLegacy(req *jsonrpc.Request, meta requestMeta, lc *legacyConn, caller Caller, out outbound) *exchange {
	ex := &exchange{era: eraLegacy, caller: caller, legacy: lc, out: out, method: req.Method, id: req.ID}
	ex.version, ex.caps, ex.logLevel = lc.snapshot()
	ex.progressToken = meta["progressToken"]
	return ex
}

// dispatch runs one request under its era and returns the marshalled result.
func (s *Server) dispatch(ctx context.Context, ex *exchange, req *jsonrpc.Request) (json.RawMessage, error) {
	if req.Method == "tools/call" && s.opts.ToolObserver != nil {
		return s.observeToolCall(ctx, ex, req)
	}
	return s.dispatchResult(ctx, ex, req)
}

// dispatchResult routes a request and marshals its result with the era's
// fields.
func (s *Server) dispatchResult(ctx context.Context, ex *exchange, req *jsonrpc.Request) (json.RawMessage, error) {
	r, err := s.lookup(ex, req.Method)
	if err != nil {
		return nil, err
	}
	res, err := r.handle(ctx, ex, req)
	if err != nil {
		return nil, err
	}
	if ex.era == eraModern {
		h := res.header()
		if h.ResultType == "" {
			h.ResultType = ResultComplete
		}
		if r.flags&noServerInfo == 0 {
			if h.Meta == nil {
				h.Meta = make(map[string]any, 1)
			}
			h.Meta[MetaServerInfo] = s.info
		}
		if c, ok := res.(cacheable); ok {
			hint := c.cacheHint()
			if hint.TTLMs == nil {
				ttl := s.opts.ListTTL.Milliseconds()
				hint.TTLMs = &ttl
			}
			if hint.CacheScope == "" {
				hint.CacheScope = CacheScopePublic
				if ex.caller.Profile.Restricted() || ex.caller.Principal != "" {
					hint.CacheScope = CacheScopePrivate
				}
			}
		}
	}
	b, err := marshalResult(res)
	if err != nil {
		return nil, fmt.Errorf("mcp: marshal %s result: %w", req.Method, err)
	}
	noteOutcome(ctx, res)
	return b, nil
}

func methodNotFound(method string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+method)
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, fmt.Sprintf(format, args...))
}

// decodeParams unmarshals params into v; absent params leave v untouched.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

func (s *Server) capabilities(modern bool, version string) ServerCapabilities {
	// Tools are always offered: an empty catalog (a profile or a build
	// without tools) still answers tools/list.
	caps := ServerCapabilities{Logging: &struct{}{}, Tools: &ListChangedCapability{ListChanged: false}}
	if s.registry.hasPrompts() {
		caps.Prompts = &ListChangedCapability{ListChanged: false}
	}
	if s.registry.hasResources() {
		caps.Resources = &ResourcesCapability{Subscribe: true, ListChanged: false}
	}
	if s.registry.hasCompletions() {
		caps.Completions = &struct{}{}
	}
	if modern {
		caps.Extensions = map[string]json.RawMessage{TasksExtension: json.RawMessage("{}")}
		for _, ext := range s.registry.extensions {
			caps.Extensions[ext] = json.RawMessage("{}")
		}
	} else if version == Version20251125 {
		caps.Tasks = legacyTasksCapability
	}
	return caps
}

func (s *Server) discover(ex *exchange) *DiscoverResult {
	return &DiscoverResult{
		SupportedVersions: SupportedVersions(),
		Capabilities:      s.capabilities(true, Version20260728),
		Instructions:      s.opts.Instructions,
	}
}

// initializeParams is the legacy initialize request.
type initializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      *Implementation    `json:"clientInfo"`
}

// negotiate answers an initialize: the client's version when supported,
// else the newest legacy version. It returns the legacy connection to open.
func (s *Server) initialize(params json.RawMessage) (*InitializeResult, *legacyConn, error) {
	var p initializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, nil, err
	}
	if p.ProtocolVersion == "" {
		return nil, nil, invalidParams("initialize: protocolVersion is required")
	}
	version := p.ProtocolVersion
	if !isLegacyVersion(version) {
		version = LatestLegacyVersion
	}
	lc := newLegacyConn(version, p.Capabilities, p.ClientInfo)
	info := s.info
	if version < Version20251125 { // ISO dates order as strings
		// Icons came with 2025-11-25; an older revision's Implementation
		// has no such field for a strict client to accept.
		info.Icons = nil
	}
	return &InitializeResult{
		ProtocolVersion: version,
		Capabilities:    s.capabilities(false, version),
		ServerInfo:      info,
		Instructions:    s.opts.Instructions,
	}, lc, nil
}

type setLevelParams struct {
	Level LoggingLevel `json:"level"`
}

func (s *Server) setLevel(_ context.Context, ex *exchange, p *setLevelParams) (result, error) {
	if !p.Level.valid() {
		return nil, invalidParams("logging/setLevel: unknown level %q", p.Level)
	}
	ex.legacy.setLogLevel(p.Level)
	return &EmptyResult{}, nil
}

type listParams struct {
	Cursor *string `json:"cursor"`
}

// checkNoCursor refuses a cursor: every list is answered in one page, so
// no cursor was ever handed out. A nil p is a list without params.
func (p *listParams) checkNoCursor() error {
	if p != nil && p.Cursor != nil {
		return invalidParams("invalid cursor")
	}
	return nil
}

// listTools answers tools/list with the tools ex's caller may call; the
// REST API's GET /api/tools calls it with p nil.
func (s *Server) listTools(ex *exchange, p *listParams) (result, error) {
	if err := p.checkNoCursor(); err != nil {
		return nil, err
	}
	tools := s.registry.listTools(ex.caller.Profile)
	enc, err := s.registry.toolsJSON.encoded(tools)
	if err != nil {
		return nil, err
	}
	return &listToolsWire{ListToolsResult: &ListToolsResult{Tools: tools}, tools: enc}, nil
}

func (s *Server) listPrompts(_ *exchange, p *listParams) (result, error) {
	if err := p.checkNoCursor(); err != nil {
		return nil, err
	}
	out := make([]Prompt, 0, len(s.registry.prompts))
	for _, p := range s.registry.prompts {
		out = append(out, p.prompt)
	}
	return &ListPromptsResult{Prompts: out}, nil
}

func (s *Server) listResources(_ *exchange, p *listParams) (result, error) {
	if err := p.checkNoCursor(); err != nil {
		return nil, err
	}
	out := make([]Resource, 0, len(s.registry.resources))
	for _, r := range s.registry.resources {
		out = append(out, r.resource)
	}
	return &ListResourcesResult{Resources: out}, nil
}

func (s *Server) listResourceTemplates(_ *exchange, p *listParams) (result, error) {
	if err := p.checkNoCursor(); err != nil {
		return nil, err
	}
	out := make([]ResourceTemplate, 0, len(s.registry.templates))
	for _, t := range s.registry.templates {
		out = append(out, t.template)
	}
	return &ListResourceTemplatesResult{ResourceTemplates: out}, nil
}

// ErrResourceNotFound is returned by resource handlers for unknown URIs.
var ErrResourceNotFound = errors.New("mcp: resource not found")

func resourceNotFound(ex *exchange, uri string) *jsonrpc.Error {
	code := int64(CodeResourceNotFound)
	if ex.era == eraLegacy {
		code = CodeLegacyResourceNotFound
	}
	return jsonrpc.NewErrorWithData(code, "resource not found", map[string]string{"uri": uri})
}

type subscribeParams struct {
	URI string `json:"uri"`
}

// subscribe answers resources/subscribe (on) or resources/unsubscribe, which
// only a legacy connection has: the stateless era listens instead.
func (s *Server) subscribe(on bool) func(context.Context, *exchange, *subscribeParams) (result, error) {
	return func(_ context.Context, ex *exchange, p *subscribeParams) (result, error) {
		if p.URI == "" {
			return nil, invalidParams("uri is required")
		}
		ex.legacy.setSubscribed(p.URI, on)
		return &EmptyResult{}, nil
	}
}

type completeParams struct {
	Ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
}

// maxCompletionValues is the spec's cap on values in one completion answer.
const maxCompletionValues = 100

func (s *Server) complete(ctx context.Context, _ *exchange, p *completeParams) (result, error) {
	var completer Completer
	switch p.Ref.Type {
	case "ref/prompt":
		rp, ok := s.registry.promptIndex[p.Ref.Name]
		if !ok {
			return nil, invalidParams("unknown prompt %q", p.Ref.Name)
		}
		completer = rp.completer
	case "ref/resource":
		found := false
		for _, t := range s.registry.templates {
			if t.template.URITemplate == p.Ref.URI {
				completer, found = t.completer, true
				break
			}
		}
		if !found {
			if _, ok := s.registry.resourceIndex[p.Ref.URI]; !ok {
				return nil, invalidParams("unknown resource reference %q", p.Ref.URI)
			}
		}
	default:
		return nil, invalidParams("unknown reference type %q", p.Ref.Type)
	}
	values := []string{}
	if completer != nil {
		values = completer(ctx, p.Argument.Name, p.Argument.Value)
	}
	res := &CompleteResult{Completion: Completion{Values: values, Total: len(values)}}
	if len(values) > maxCompletionValues {
		res.Completion.Values = values[:maxCompletionValues]
		res.Completion.HasMore = true
	}
	return res, nil
}
