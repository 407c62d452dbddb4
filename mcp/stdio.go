package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"winx/jsonrpc"
)

// MaxStdioLine bounds one incoming stdio message.
const MaxStdioLine = 8 << 20

// StdioStopGrace is how long calls still running when a stdio server is told
// to stop (its context ends: SIGTERM, the MCP stdio shutdown, or Ctrl-C) get
// to answer before they are cancelled. Short, so that the process is gone
// well within the couple of seconds a client waits before SIGKILL.
const StdioStopGrace = 1500 * time.Millisecond

// StdioOptions configures ServeStdio; nil means defaults.
type StdioOptions struct {
	// Caller is the identity of the local user (usually Principal "").
	Caller Caller
	// MaxLine overrides MaxStdioLine.
	MaxLine int
}

// ServeStdio serves one client on newline-delimited JSON-RPC until in reaches
// EOF or ctx ends. Only protocol messages are written to out. When ctx ends
// it stops reading at once (in may stay open: a client sending SIGTERM does
// not close it), gives running calls StdioStopGrace and returns nil: a stop
// is a clean end.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts *StdioOptions) error {
	var o StdioOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLine <= 0 {
		o.MaxLine = MaxStdioLine
	}
	if o.Caller.Profile.Name == "" && !o.Caller.Profile.Restricted() {
		o.Caller.Profile = FullProfile()
	}
	p := &stdioPeer{server: s, caller: o.Caller}
	p.conn = jsonrpc.NewConn(jsonrpc.NewLineReader(in, o.MaxLine), jsonrpc.NewLineWriter(out), p,
		// Every answer is built by the server's encoder (marshalResult).
		&jsonrpc.ConnOptions{EncodedResults: true, StopGrace: StdioStopGrace})
	err := p.conn.Run(ctx)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// stdioPeer is the single client of a stdio process.
type stdioPeer struct {
	server *Server
	caller Caller
	conn   *jsonrpc.Conn

	mu     sync.Mutex  // guards legacy
	legacy *legacyConn // set by initialize (or the first call); nil before
}

func (p *stdioPeer) currentLegacy() *legacyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.legacy == nil {
		// A client that skips initialize is served at the oldest version
		// the Streamable HTTP transport would assume.
		p.legacy = newLegacyConn(DefaultHTTPLegacyVersion, nil, nil)
	}
	return p.legacy
}

// Handle implements jsonrpc.Handler.
func (p *stdioPeer) Handle(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	s := p.server
	if !req.IsCall() {
		p.mu.Lock()
		lc := p.legacy
		p.mu.Unlock()
		s.handleNotification(lc, req, func(id jsonrpc.ID) { p.conn.CancelIncoming(id) })
		return nil, nil
	}
	if req.Method == "initialize" && !hasModernMeta(req.Params) {
		res, lc, err := s.handleInitialize(req)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.legacy = lc
		p.mu.Unlock()
		return res, nil
	}
	meta, err := decodeMeta(req.Params)
	if err != nil {
		return nil, err
	}
	out := stdioOutbound{conn: p.conn}
	var res json.RawMessage
	if _, modern := meta[MetaProtocolVersion]; modern {
		ex, err := s.prepareModern(req, meta, p.caller, out)
		if err != nil {
			return nil, err
		}
		res, err = s.handleModern(ctx, ex, req)
		return answerAfterCancel(ctx, res, err)
	}
	ex := s.prepareLegacy(req, meta, p.currentLegacy(), p.caller, out)
	res, err = s.handleLegacy(ctx, ex, req)
	return answerAfterCancel(ctx, res, err)
}

type stdioOutbound struct{ conn *jsonrpc.Conn }

func (o stdioOutbound) notify(method string, params any) error { return o.conn.Notify(method, params) }

func (o stdioOutbound) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := o.conn.Call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}
