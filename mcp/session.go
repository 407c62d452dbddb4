package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"winx/jsonrpc"
)

// session is one legacy (initialize-based) client: the whole process on
// stdio, one Mcp-Session-Id on HTTP. It owns the negotiated version, the
// client's capabilities, the log level and resource subscriptions, and on
// HTTP the server-to-client calls awaiting answers.
type session struct {
	id string // HTTP session id; "" on stdio

	mu          sync.Mutex // guards every field below
	version     string
	caps        ClientCapabilities
	clientInfo  *Implementation
	logLevel    LoggingLevel
	initialized bool
	subscribed  map[string]bool
	// pending maps an outgoing call's id text to where its answer goes.
	pending map[string]chan *jsonrpc.Response
	nextID  int64
	// inflight maps an incoming call's id text to its cancel function, so
	// notifications/cancelled can stop it (HTTP; stdio uses the Conn's table).
	inflight map[string]context.CancelFunc
	lastSeen time.Time
	// stream receives notifications not tied to a request (resource updates)
	// while a GET stream is open; nil otherwise.
	stream chan []byte
}

func newSession(version string, caps ClientCapabilities, info *Implementation) *session {
	if caps == nil {
		caps = ClientCapabilities{}
	}
	return &session{
		version:    version,
		caps:       caps,
		clientInfo: info,
		subscribed: make(map[string]bool),
		pending:    make(map[string]chan *jsonrpc.Response),
		inflight:   make(map[string]context.CancelFunc),
	}
}

func (s *session) snapshot() (version string, caps ClientCapabilities, level LoggingLevel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.caps, s.logLevel
}

func (s *session) setLogLevel(l LoggingLevel) {
	s.mu.Lock()
	s.logLevel = l
	s.mu.Unlock()
}

func (s *session) markInitialized() {
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
}

func (s *session) setSubscribed(uri string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.subscribed[uri] = true
	} else {
		delete(s.subscribed, uri)
	}
}

func (s *session) isSubscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subscribed[uri]
}

func (s *session) touch(now time.Time) {
	s.mu.Lock()
	s.lastSeen = now
	s.mu.Unlock()
}

func (s *session) idleSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSeen
}

// newCall reserves an id for a server-to-client request.
func (s *session) newCall() (jsonrpc.ID, chan *jsonrpc.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := jsonrpc.StringID("winx-s2c-" + itoa(s.nextID))
	ch := make(chan *jsonrpc.Response, 1)
	s.pending[id.String()] = ch
	return id, ch
}

func (s *session) forgetCall(id jsonrpc.ID) {
	s.mu.Lock()
	delete(s.pending, id.String())
	s.mu.Unlock()
}

// deliver routes a client's response to the waiting call; false if none.
func (s *session) deliver(resp *jsonrpc.Response) bool {
	s.mu.Lock()
	ch, ok := s.pending[resp.ID.String()]
	delete(s.pending, resp.ID.String())
	s.mu.Unlock()
	if ok {
		ch <- resp
	}
	return ok
}

// track registers an incoming call for cancellation; the returned function
// removes it.
func (s *session) track(id jsonrpc.ID, cancel context.CancelFunc) func() {
	s.mu.Lock()
	s.inflight[id.String()] = cancel
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.inflight, id.String())
		s.mu.Unlock()
	}
}

func (s *session) cancel(id jsonrpc.ID) {
	s.mu.Lock()
	cancel, ok := s.inflight[id.String()]
	s.mu.Unlock()
	if ok {
		cancel()
	}
}

// openStream attaches a GET stream; false if one is already open.
func (s *session) openStream() (chan []byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream != nil {
		return nil, false
	}
	s.stream = make(chan []byte, 64)
	return s.stream, true
}

func (s *session) closeStream(ch chan []byte) {
	s.mu.Lock()
	if s.stream == ch {
		s.stream = nil
	}
	s.mu.Unlock()
}

// push offers a notification to the GET stream without blocking; a slow
// stream loses messages rather than stalling the server.
func (s *session) push(frame []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream == nil {
		return false
	}
	select {
	case s.stream <- frame:
		return true
	default:
		return false
	}
}

func itoa(n int64) string { return string(mustMarshal(n)) }

type cancelledParams struct {
	RequestID jsonrpc.ID `json:"requestId"`
	Reason    string     `json:"reason"`
}

func decodeCancelled(params json.RawMessage) (jsonrpc.ID, bool) {
	var p cancelledParams
	if json.Unmarshal(params, &p) != nil || !p.RequestID.IsValid() {
		return jsonrpc.ID{}, false
	}
	return p.RequestID, true
}
