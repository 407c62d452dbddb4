package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"winx/jsonrpc"
)

// legacyConn is one legacy (initialize-based) connection, in the sense of
// the MCP lifecycle that initialize opens: the whole process on stdio, the
// requests one Mcp-Session-Id names on HTTP (the transport revisions call
// that a session; the wire keeps their word). It is not a network
// connection, and not a Winx session (package mcp/session) or a shell
// (guardian). It owns the negotiated version, the client's capabilities,
// the log level and resource subscriptions, and on HTTP the
// server-to-client calls awaiting answers.
type legacyConn struct {
	id string // its Mcp-Session-Id on HTTP; "" on stdio

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

func newLegacyConn(version string, caps ClientCapabilities, info *Implementation) *legacyConn {
	if caps == nil {
		caps = ClientCapabilities{}
	}
	return &legacyConn{
		version:    version,
		caps:       caps,
		clientInfo: info,
		subscribed: make(map[string]bool),
		pending:    make(map[string]chan *jsonrpc.Response),
		inflight:   make(map[string]context.CancelFunc),
	}
}

func (c *legacyConn) snapshot() (version string, caps ClientCapabilities, level LoggingLevel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version, c.caps, c.logLevel
}

func (c *legacyConn) setLogLevel(l LoggingLevel) {
	c.mu.Lock()
	c.logLevel = l
	c.mu.Unlock()
}

func (c *legacyConn) markInitialized() {
	c.mu.Lock()
	c.initialized = true
	c.mu.Unlock()
}

func (c *legacyConn) setSubscribed(uri string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.subscribed[uri] = true
	} else {
		delete(c.subscribed, uri)
	}
}

func (c *legacyConn) isSubscribed(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subscribed[uri]
}

func (c *legacyConn) touch(now time.Time) {
	c.mu.Lock()
	c.lastSeen = now
	c.mu.Unlock()
}

func (c *legacyConn) idleSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeen
}

// newCall reserves an id for a server-to-client request.
func (c *legacyConn) newCall() (jsonrpc.ID, chan *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := jsonrpc.StringID("winx-s2c-" + itoa(c.nextID))
	ch := make(chan *jsonrpc.Response, 1)
	c.pending[id.String()] = ch
	return id, ch
}

func (c *legacyConn) forgetCall(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id.String())
	c.mu.Unlock()
}

// deliver routes a client's response to the waiting call; false if none.
func (c *legacyConn) deliver(resp *jsonrpc.Response) bool {
	c.mu.Lock()
	ch, ok := c.pending[resp.ID.String()]
	delete(c.pending, resp.ID.String())
	c.mu.Unlock()
	if ok {
		ch <- resp
	}
	return ok
}

// track registers an incoming call for cancellation; the returned function
// removes it.
func (c *legacyConn) track(id jsonrpc.ID, cancel context.CancelFunc) func() {
	c.mu.Lock()
	c.inflight[id.String()] = cancel
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.inflight, id.String())
		c.mu.Unlock()
	}
}

func (c *legacyConn) cancel(id jsonrpc.ID) {
	c.mu.Lock()
	cancel, ok := c.inflight[id.String()]
	c.mu.Unlock()
	if ok {
		cancel()
	}
}

// openStream attaches a GET stream; false if one is already open.
func (c *legacyConn) openStream() (chan []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream != nil {
		return nil, false
	}
	c.stream = make(chan []byte, 64)
	return c.stream, true
}

func (c *legacyConn) closeStream(ch chan []byte) {
	c.mu.Lock()
	if c.stream == ch {
		c.stream = nil
	}
	c.mu.Unlock()
}

// push offers a notification to the GET stream without blocking; a slow
// stream loses messages rather than stalling the server.
func (c *legacyConn) push(frame []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream == nil {
		return false
	}
	select {
	case c.stream <- frame:
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
