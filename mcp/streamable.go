package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"winx/jsonrpc"
)

// DefaultMaxBodyBytes bounds one POST body.
const DefaultMaxBodyBytes = 64 << 20

// Limits of the legacy era's connections on HTTP. The exported names say
// "session" as the transport revisions do for what one Mcp-Session-Id names.
const (
	defaultSessionIdle = 30 * time.Minute
	// DefaultMaxSessions is the default of HTTPOptions.MaxSessions.
	DefaultMaxSessions = 1024
)

// Authenticator decides who sent an HTTP request. It returns ErrUnauthorized
// (possibly wrapped) to get a 401.
type Authenticator interface {
	Authenticate(r *http.Request) (Caller, error)
}

// ErrUnauthorized is returned by an Authenticator for a missing or wrong
// credential.
var ErrUnauthorized = errors.New("mcp: unauthorized")

// HTTPOptions configures the Streamable HTTP handler; nil means defaults.
type HTTPOptions struct {
	// Auth authenticates requests; nil lets everyone in as the zero Caller
	// with the full profile (only for tests and loopback fixtures).
	Auth Authenticator
	// AllowedHosts are extra host names (no port) accepted in Host and
	// Origin, beyond localhost, 127.0.0.1 and ::1.
	AllowedHosts []string
	// MaxBodyBytes overrides DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionIdle ends legacy connections unused this long (default 30 min).
	SessionIdle time.Duration
	// MaxSessions bounds concurrent legacy connections (default 1024).
	MaxSessions int
	// MaxSessionsPerPrincipal bounds the legacy connections of one principal
	// within MaxSessions, so that one principal cannot take them all;
	// 0 means no bound beyond MaxSessions.
	MaxSessionsPerPrincipal int
}

// HTTPHandler serves MCP Streamable HTTP on one endpoint for both eras.
type HTTPHandler struct {
	server  *Server
	opts    HTTPOptions
	allowed map[string]bool // lower-case host names accepted in Host/Origin

	mu     sync.Mutex                 // guards legacy
	legacy map[string]*httpLegacyConn // by Mcp-Session-Id
}

// httpLegacyConn is a legacy connection on HTTP, named by its Mcp-Session-Id
// and bound to the principal that created it.
type httpLegacyConn struct {
	*legacyConn
	principal string
	caller    Caller
}

// NewHTTPHandler returns the handler; mount it on /mcp.
func NewHTTPHandler(s *Server, opts *HTTPOptions) *HTTPHandler {
	h := &HTTPHandler{server: s, legacy: make(map[string]*httpLegacyConn)}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxBodyBytes <= 0 {
		h.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.opts.SessionIdle <= 0 {
		h.opts.SessionIdle = defaultSessionIdle
	}
	if h.opts.MaxSessions <= 0 {
		h.opts.MaxSessions = DefaultMaxSessions
	}
	h.allowed = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	for _, host := range h.opts.AllowedHosts {
		h.allowed[strings.ToLower(strings.Trim(host, "[]"))] = true
	}
	return h
}

// refusal is a request admit turned away, before anything looked at its
// path or body.
type refusal struct {
	status  int
	message string
}

// admit runs the checks every request passes first, in this order, on /mcp
// and on the REST tool API alike: DNS-rebinding protection (Host, then
// Origin), then authentication. It returns the caller, keyed by the
// request's conversation id, or why the request is refused (a 401 has its
// WWW-Authenticate header set on w).
func (h *HTTPHandler) admit(w http.ResponseWriter, r *http.Request) (Caller, *refusal) {
	if !h.hostAllowed(r.Host) {
		return Caller{}, &refusal{http.StatusForbidden, "host not allowed"}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin) {
		return Caller{}, &refusal{http.StatusForbidden, "origin not allowed"}
	}
	caller := Caller{Profile: FullProfile()}
	if h.opts.Auth != nil {
		c, err := h.opts.Auth.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="winx"`)
			return Caller{}, &refusal{http.StatusUnauthorized, "unauthorized"}
		}
		caller = c
	}
	caller.Conversation = conversationID(r)
	return caller, nil
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller, refusal := h.admit(w, r)
	if refusal != nil {
		httpError(w, refusal.status, refusal.message)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, caller)
	case http.MethodGet:
		h.get(w, r, caller)
	case http.MethodDelete:
		h.delete(w, r, caller)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

// maxConversationID bounds a conversation id taken from a header.
const maxConversationID = 128

// conversationID names the conversation a request belongs to: the
// Mcp-Session-Id of its legacy connection, else the client's
// X-Winx-Conversation-Id. Ids that are too
// long or not visible ASCII are ignored.
func conversationID(r *http.Request) string {
	for _, h := range []string{"Mcp-Session-Id", "X-Winx-Conversation-Id"} {
		v := r.Header.Get(h)
		if v == "" || len(v) > maxConversationID {
			continue
		}
		ok := true
		for i := 0; i < len(v); i++ {
			if v[i] <= ' ' || v[i] > '~' {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return ""
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func (h *HTTPHandler) hostAllowed(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	return h.allowed[host]
}

func (h *HTTPHandler) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return h.allowed[strings.ToLower(u.Hostname())]
}

// writeJSONRPC answers with one JSON message.
// A large result is written as it is, not copied into a message buffer.
func writeJSONRPC(w http.ResponseWriter, status int, m jsonrpc.Message) {
	parts, err := jsonrpc.EncodeMessageParts(m)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "internal error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	writeJSONRPC(w, status, &jsonrpc.Response{ID: id, Error: e})
}

func acceptsAny(r *http.Request, types ...string) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return true
	}
	for _, v := range accept {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if mt == "*/*" {
				return true
			}
			for _, t := range types {
				if mt == t {
					return true
				}
			}
		}
	}
	return false
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request, caller Caller) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "content type must be application/json")
		return
	}
	if !acceptsAny(r, "application/json", "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, "accept application/json or text/event-stream")
		return
	}
	body, err := readBody(w, r, h.opts.MaxBodyBytes)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body too large"))
			return
		}
		httpError(w, http.StatusBadRequest, "cannot read body")
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeError(w, http.StatusBadRequest, de.ID, de.Err)
			return
		}
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "parse error"))
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		h.postResponse(w, r, caller, m)
	case *jsonrpc.Request:
		if !m.IsCall() {
			h.postNotification(w, r, caller, m)
			return
		}
		h.postCall(w, r, caller, m)
	}
}

// readBody reads a request body of at most max bytes. A declared length is
// read into one buffer of that size (no growth copies, and an oversized
// declaration is refused before any byte is read).
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, &http.MaxBytesError{Limit: max}
	}
	body := http.MaxBytesReader(w, r.Body, max)
	if r.ContentLength < 0 {
		return io.ReadAll(body)
	}
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// legacyConnFor resolves the Mcp-Session-Id header to its legacy connection. It returns (nil, true)
// when the header is absent and writes nothing; false means the request was
// already answered with an error (unknown, expired or another principal's;
// the wire message says "unknown session", the transport's word).
func (h *HTTPHandler) legacyConnFor(w http.ResponseWriter, r *http.Request, caller Caller) (*httpLegacyConn, bool) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return nil, true
	}
	now := h.server.opts.Now()
	h.mu.Lock()
	hc, ok := h.legacy[id]
	if ok && now.Sub(hc.idleSince()) > h.opts.SessionIdle {
		delete(h.legacy, id)
		ok = false
	}
	h.mu.Unlock()
	if !ok || hc.principal != caller.Principal {
		httpError(w, http.StatusNotFound, "unknown session")
		return nil, false
	}
	hc.touch(now)
	return hc, true
}

func (h *HTTPHandler) postResponse(w http.ResponseWriter, r *http.Request, caller Caller, resp *jsonrpc.Response) {
	hc, ok := h.legacyConnFor(w, r, caller)
	if !ok {
		return
	}
	if hc == nil {
		httpError(w, http.StatusBadRequest, "a response needs the Mcp-Session-Id of its session")
		return
	}
	hc.deliver(resp)
	w.WriteHeader(http.StatusAccepted)
}

func (h *HTTPHandler) postNotification(w http.ResponseWriter, r *http.Request, caller Caller, req *jsonrpc.Request) {
	if header := r.Header.Get("MCP-Protocol-Version"); header != "" && !isLegacyVersion(header) {
		// Stateless notifications carry the same routing headers as
		// requests; legacy connections do not exist in this era.
		if v := ModernVersionOf(req.Params); v != "" && v != header {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, headerMismatch("MCP-Protocol-Version header does not match _meta"))
			return
		}
		if e := checkRoutingHeaders(r, req); e != nil {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, e)
			return
		}
		h.server.handleNotification(nil, req, func(jsonrpc.ID) {})
		w.WriteHeader(http.StatusAccepted)
		return
	}
	hc, ok := h.legacyConnFor(w, r, caller)
	if !ok {
		return
	}
	var base *legacyConn
	cancel := func(jsonrpc.ID) {}
	if hc != nil {
		base = hc.legacyConn
		cancel = hc.cancel
	}
	h.server.handleNotification(base, req, cancel)
	w.WriteHeader(http.StatusAccepted)
}

// headerMismatch is the -32020 answer.
func headerMismatch(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(CodeHeaderMismatch, msg)
}

// nameParamFor names the params field that Mcp-Name must mirror.
func nameParamFor(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

// decodeHeaderValue undoes the =?base64?...?= wrapping of non-ASCII values.
func decodeHeaderValue(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		inner := v[len("=?base64?") : len(v)-2]
		// encoding/base64 skips CR and LF even in strict mode; a header
		// value that carries them is not a canonical encoding.
		if strings.ContainsAny(inner, "\r\n") {
			return "", false
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(inner)
		if err != nil {
			return "", false
		}
		return string(raw), true
	}
	return v, true
}

// checkRoutingHeaders enforces that Mcp-Method and Mcp-Name mirror the body.
func checkRoutingHeaders(r *http.Request, req *jsonrpc.Request) *jsonrpc.Error {
	method := r.Header.Get("Mcp-Method")
	if method == "" {
		return headerMismatch("missing Mcp-Method header")
	}
	if method != req.Method {
		return headerMismatch("Mcp-Method header does not match the request method")
	}
	field := nameParamFor(req.Method)
	if field == "" {
		return nil
	}
	var want string
	if v := jsonrpc.Member(req.Params, field); v != nil {
		_ = json.Unmarshal(v, &want)
	}
	header := strings.TrimSpace(r.Header.Get("Mcp-Name"))
	if header == "" {
		return headerMismatch("missing Mcp-Name header")
	}
	got, ok := decodeHeaderValue(header)
	if !ok || got != want {
		return headerMismatch("Mcp-Name header does not match params." + field)
	}
	return nil
}

// modernStatus maps a 2026-07-28 error to its HTTP status.
func modernStatus(e *jsonrpc.Error) int {
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (h *HTTPHandler) postCall(w http.ResponseWriter, r *http.Request, caller Caller, req *jsonrpc.Request) {
	s := h.server
	header := r.Header.Get("MCP-Protocol-Version")
	// initialize opens a legacy connection, unless the request names the
	// stateless era: there initialize is a removed method like any other.
	if req.Method == "initialize" && !isModernVersion(header) && !hasModernMeta(req.Params) {
		h.initialize(w, r, caller, req)
		return
	}
	sessID := r.Header.Get("Mcp-Session-Id")
	if isLegacyVersion(header) || (sessID != "" && !isModernVersion(header)) {
		h.legacyCall(w, r, caller, req, header)
		return
	}
	// Stateless 2026-07-28 rules, checked in the order the revision gives.
	if header == "" {
		writeError(w, http.StatusBadRequest, req.ID, headerMismatch("missing MCP-Protocol-Version header"))
		return
	}
	meta, err := decodeMeta(req.Params)
	if err != nil {
		writeError(w, http.StatusBadRequest, req.ID, jsonrpc.AsWireError(err))
		return
	}
	if _, ok := meta[MetaProtocolVersion]; !ok {
		writeError(w, http.StatusBadRequest, req.ID, invalidParams("_meta."+MetaProtocolVersion+" is required"))
		return
	}
	if _, ok := meta[MetaClientCapabilities]; !ok {
		writeError(w, http.StatusBadRequest, req.ID, invalidParams("_meta."+MetaClientCapabilities+" is required"))
		return
	}
	if v := ModernVersionOf(req.Params); v != header {
		writeError(w, http.StatusBadRequest, req.ID, headerMismatch("MCP-Protocol-Version header does not match _meta"))
		return
	}
	out := newSSEOutbound(w, r)
	ex, err := s.prepareModern(req, meta, caller, out)
	if err != nil {
		writeError(w, http.StatusBadRequest, req.ID, jsonrpc.AsWireError(err))
		return
	}
	if e := checkRoutingHeaders(r, req); e != nil {
		writeError(w, http.StatusBadRequest, req.ID, e)
		return
	}
	if e := h.checkParamHeaders(r, caller, req); e != nil {
		writeError(w, http.StatusBadRequest, req.ID, e)
		return
	}
	if req.Method == "subscriptions/listen" {
		out.start() // the stream itself is the answer
	}
	res, err := s.handleModern(r.Context(), ex, req)
	out.finish(req.ID, res, err, modernStatus)
}

func (h *HTTPHandler) legacyCall(w http.ResponseWriter, r *http.Request, caller Caller, req *jsonrpc.Request, header string) {
	if header != "" && !isLegacyVersion(header) {
		httpError(w, http.StatusBadRequest, "unsupported MCP-Protocol-Version")
		return
	}
	hc, ok := h.legacyConnFor(w, r, caller)
	if !ok {
		return
	}
	if hc == nil {
		httpError(w, http.StatusBadRequest, "missing Mcp-Session-Id: initialize first")
		return
	}
	meta, err := decodeMeta(req.Params)
	if err != nil {
		writeError(w, http.StatusOK, req.ID, jsonrpc.AsWireError(err))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	untrack := hc.track(req.ID, cancel)
	defer untrack()
	out := newSSEOutbound(w, r)
	out.legacy = hc.legacyConn
	// The legacy connection is the conversation: its Mcp-Session-Id, not
	// a header the client chose, decides which calls share a shell.
	c := hc.caller
	c.Conversation = hc.id
	ex := h.server.prepareLegacy(req, meta, hc.legacyConn, c, out)
	res, err := h.server.handleLegacy(ctx, ex, req)
	res, err = answerAfterCancel(ctx, res, err)
	out.finish(req.ID, res, err, func(*jsonrpc.Error) int { return http.StatusOK })
}

// newMcpSessionID mints the Mcp-Session-Id of a new legacy connection.
func newMcpSessionID() string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("mcp: no randomness for session ids: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (h *HTTPHandler) initialize(w http.ResponseWriter, r *http.Request, caller Caller, req *jsonrpc.Request) {
	res, lc, err := h.server.handleInitialize(req)
	if err != nil {
		writeError(w, http.StatusOK, req.ID, jsonrpc.AsWireError(err))
		return
	}
	lc.id = newMcpSessionID()
	lc.touch(h.server.opts.Now())
	hc := &httpLegacyConn{legacyConn: lc, principal: caller.Principal, caller: caller}
	h.mu.Lock()
	h.expireLocked()
	if len(h.legacy) >= h.opts.MaxSessions || h.atShareLocked(caller.Principal) {
		h.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusServiceUnavailable, "too many sessions")
		return
	}
	h.legacy[lc.id] = hc
	h.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", lc.id)
	writeJSONRPC(w, http.StatusOK, &jsonrpc.Response{ID: req.ID, Result: res})
}

// atShareLocked reports that principal holds MaxSessionsPerPrincipal
// legacy connections already.
func (h *HTTPHandler) atShareLocked(principal string) bool {
	if h.opts.MaxSessionsPerPrincipal <= 0 {
		return false
	}
	n := 0
	for _, hc := range h.legacy {
		if hc.principal == principal {
			n++
		}
	}
	return n >= h.opts.MaxSessionsPerPrincipal
}

// expireLocked drops legacy connections idle for longer than SessionIdle.
func (h *HTTPHandler) expireLocked() {
	now := h.server.opts.Now()
	for id, hc := range h.legacy {
		if now.Sub(hc.idleSince()) > h.opts.SessionIdle {
			delete(h.legacy, id)
		}
	}
}

func (h *HTTPHandler) get(w http.ResponseWriter, r *http.Request, caller Caller) {
	hc, ok := h.legacyConnFor(w, r, caller)
	if !ok {
		return
	}
	if hc == nil {
		// 2026-07-28 has no standalone stream; listen streams are POSTs.
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, "no standalone stream without a session")
		return
	}
	if !acceptsAny(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, "accept text/event-stream")
		return
	}
	ch, ok := hc.openStream()
	if !ok {
		httpError(w, http.StatusConflict, "a stream is already open for this session")
		return
	}
	defer hc.closeStream(ch)
	remove := h.server.subs.add(func(c change) {
		if c.method == "notifications/resources/updated" && hc.isSubscribed(c.uri) {
			req, _ := jsonrpc.NewNotification(c.method, map[string]string{"uri": c.uri})
			if b, err := jsonrpc.EncodeMessage(req); err == nil {
				hc.push(b)
			}
		}
	})
	defer remove()
	out := newSSEOutbound(w, r)
	out.start()
	for {
		select {
		case frame := <-ch:
			if out.writeFrame(frame) != nil {
				return
			}
			hc.touch(h.server.opts.Now())
		case <-r.Context().Done():
			return
		}
	}
}

func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request, caller Caller) {
	hc, ok := h.legacyConnFor(w, r, caller)
	if !ok {
		return
	}
	if hc == nil {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, "no session to delete")
		return
	}
	h.mu.Lock()
	delete(h.legacy, hc.id)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// sseOutbound answers one POST. It starts as a plain JSON answer and turns
// into an SSE stream the first time something must precede the response
// (progress, logs, server-to-client requests).
type sseOutbound struct {
	w      http.ResponseWriter
	r      *http.Request
	canSSE bool
	legacy *legacyConn // legacy era only: where server-to-client answers arrive

	mu      sync.Mutex // guards started and writes to w
	started bool
	failed  bool
}

func newSSEOutbound(w http.ResponseWriter, r *http.Request) *sseOutbound {
	return &sseOutbound{w: w, r: r, canSSE: acceptsAny(r, "text/event-stream")}
}

func (o *sseOutbound) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.startLocked()
}

func (o *sseOutbound) startLocked() {
	if o.started {
		return
	}
	o.started = true
	hdr := o.w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

var errNoStream = errors.New("mcp: client does not accept an event stream")

func (o *sseOutbound) writeFrame(frame []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.canSSE {
		return errNoStream
	}
	if o.failed {
		return io.ErrClosedPipe
	}
	o.startLocked()
	buf := make([]byte, 0, len(frame)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, frame...)
	buf = append(buf, "\n\n"...)
	if _, err := o.w.Write(buf); err != nil {
		o.failed = true
		return err
	}
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func (o *sseOutbound) notify(method string, params any) error {
	req, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return err
	}
	return o.writeFrame(b)
}

func (o *sseOutbound) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if o.legacy == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "no session for a server-to-client request")
	}
	id, ch := o.legacy.newCall()
	defer o.legacy.forgetCall(id)
	req, err := jsonrpc.NewCall(id, method, params)
	if err != nil {
		return nil, err
	}
	b, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return nil, err
	}
	if err := o.writeFrame(b); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// finish writes the answer: as the last SSE event when streaming, else as a
// JSON body with the status that status() gives for errors.
func (o *sseOutbound) finish(id jsonrpc.ID, res json.RawMessage, err error, status func(*jsonrpc.Error) int) {
	if errors.Is(err, jsonrpc.ErrNoResponse) {
		o.mu.Lock()
		started := o.started
		o.mu.Unlock()
		if !started {
			o.w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	resp := &jsonrpc.Response{ID: id, Result: res, Encoded: true} // built by the server's encoder
	code := http.StatusOK
	if err != nil {
		resp = &jsonrpc.Response{ID: id, Error: jsonrpc.AsWireError(err)}
		code = status(resp.Error)
	}
	o.mu.Lock()
	started := o.started
	o.mu.Unlock()
	if !started {
		writeJSONRPC(o.w, code, resp)
		return
	}
	if b, err := jsonrpc.EncodeMessage(resp); err == nil {
		_ = o.writeFrame(b)
	}
}
