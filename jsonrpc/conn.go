package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Handler answers incoming requests. For a notification the result is
// discarded. A returned *Error reaches the peer as is; any other error becomes
// InternalError. Handle runs on its own goroutine per call, so it may block.
type Handler interface {
	Handle(ctx context.Context, req *Request) (json.RawMessage, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (json.RawMessage, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (json.RawMessage, error) {
	return f(ctx, req)
}

// ConnOptions tunes a Conn; nil means defaults.
type ConnOptions struct {
	// OnDecodeError is told of every frame that was not a message, after the
	// error response (if any) was sent. Nil ignores them.
	OnDecodeError func(error)
	// MaxInFlight bounds concurrently running incoming calls; further calls
	// wait for a slot, which applies back-pressure to the reader. Zero means 64.
	MaxInFlight int
	// EncodedResults says the handler's results come from a JSON encoder
	// (valid by construction): they are sent without being scanned again.
	EncodedResults bool
	// DrainTimeout is how long Run lets running calls finish and answer
	// after the input ended cleanly, before cancelling them. Zero means 5 s.
	DrainTimeout time.Duration
	// StopGrace is how long Run lets running calls finish and answer after
	// its context ended (a stdio server told to stop by a signal), before
	// cancelling them. Zero cancels them at once.
	StopGrace time.Duration
}

// Conn is one JSON-RPC peer on a pair of framers. It runs incoming calls
// concurrently, tracks them by ID so they can be cancelled, and matches
// responses to outgoing calls.
type Conn struct {
	r       FrameReader
	w       FrameWriter
	handler Handler
	opts    ConnOptions
	slots   chan struct{}

	mu sync.Mutex // guards the fields below
	// incoming maps a running call's ID text to its cancel function.
	// Invariant: an entry exists exactly while its handler runs.
	incoming map[string]context.CancelFunc
	// outgoing maps an outgoing call's ID text to the channel its response
	// is delivered on (buffered, written once).
	outgoing map[string]chan *Response
	nextID   int64
	closed   bool

	handlers sync.WaitGroup // running incoming handlers
}

// NewConn returns a connection; call Run to start reading.
func NewConn(r FrameReader, w FrameWriter, h Handler, opts *ConnOptions) *Conn {
	c := &Conn{
		r:        r,
		w:        w,
		handler:  h,
		incoming: make(map[string]context.CancelFunc),
		outgoing: make(map[string]chan *Response),
	}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxInFlight <= 0 {
		c.opts.MaxInFlight = 64
	}
	if c.opts.DrainTimeout <= 0 {
		c.opts.DrainTimeout = 5 * time.Second
	}
	c.slots = make(chan struct{}, c.opts.MaxInFlight)
	return c
}

// Run reads until the reader ends or ctx is done, dispatching requests and
// delivering responses. After a clean end of input, running calls get
// DrainTimeout to answer (a client that writes its requests and closes its
// end still gets its answers); then they are cancelled. When ctx ends, Run
// stops reading at once, even while a read blocks, and running calls get
// StopGrace to answer before they are cancelled. Run returns once every
// handler has returned: nil after a clean end of input, ctx's error after
// a stop.
//
// Reads happen on a goroutine of their own, one at a time and only when Run
// asks for the next frame, so the reader is never ahead of the dispatcher.
// A read that blocks when ctx ends is left to finish on that goroutine,
// which then drops its frame and exits: a caller that must get the
// goroutine back closes the reader (or sets a read deadline) when ctx ends.
func (c *Conn) Run(ctx context.Context) error {
	// Handlers may outlive ctx by StopGrace, so their context is detached
	// from it (keeping its values) and cancelled here.
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer func() {
		cancel(ErrStopped)
		c.shutdown()
		c.handlers.Wait()
	}()
	next := make(chan struct{}, 1)
	frames := make(chan readResult)
	stopped := make(chan struct{})
	defer close(stopped)
	go c.readLoop(next, frames, stopped)
	for {
		next <- struct{}{} // empty: Run sends only after taking a frame
		var rr readResult
		select {
		case rr = <-frames:
		case <-ctx.Done():
			c.drain(nil, c.opts.StopGrace)
			return ctx.Err()
		}
		if err := rr.err; err != nil {
			var tooLarge *FrameTooLargeError
			if errors.As(err, &tooLarge) {
				if _, recoverable := c.r.(*LineReader); recoverable {
					c.replyDecodeError(&DecodeError{Err: NewError(CodeInvalidRequest, tooLarge.Error())})
					continue
				}
			}
			if errors.Is(err, io.EOF) {
				if !c.drain(ctx.Done(), c.opts.DrainTimeout) {
					// Stopped while draining: the stop's grace applies.
					c.drain(nil, c.opts.StopGrace)
				}
				return nil
			}
			return err
		}
		msg, err := DecodeMessage(rr.frame)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				c.replyDecodeError(de)
			}
			continue
		}
		switch m := msg.(type) {
		case *Request:
			if err := c.dispatch(ctx, base, m); err != nil {
				if ctx.Err() != nil {
					c.drain(nil, c.opts.StopGrace)
				}
				return err
			}
		case *Response:
			c.deliver(m)
		}
	}
}

// readResult is one ReadFrame's outcome.
type readResult struct {
	frame []byte
	err   error
}

// readLoop reads one frame per token on next and hands it over on frames,
// until a read fails for good or Run closes stopped. A frame stays the
// reader's until the next read, which Run asks for only when done with it.
func (c *Conn) readLoop(next <-chan struct{}, frames chan<- readResult, stopped <-chan struct{}) {
	for {
		select {
		case <-next:
		case <-stopped:
			return
		}
		frame, err := c.r.ReadFrame()
		select {
		case frames <- readResult{frame, err}:
		case <-stopped:
			return
		}
		var tooLarge *FrameTooLargeError
		if err != nil && !errors.As(err, &tooLarge) {
			return
		}
	}
}

// drain waits up to d for running handlers, or until stop closes (a nil
// stop never does). It reports whether it ended without stop closing.
func (c *Conn) drain(stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	done := make(chan struct{})
	go func() {
		c.handlers.Wait()
		close(done)
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-stop:
		return false
	}
	return true
}

func (c *Conn) replyDecodeError(de *DecodeError) {
	_ = c.writeMessage(&Response{ID: de.ID, Error: de.Err})
	if c.opts.OnDecodeError != nil {
		c.opts.OnDecodeError(de)
	}
}

// dispatch starts req's handler under base once a slot is free; it gives up
// when ctx (Run's) ends first.
func (c *Conn) dispatch(ctx, base context.Context, req *Request) error {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	hctx, hcancel := context.WithCancel(base)
	if req.IsCall() {
		c.mu.Lock()
		if _, dup := c.incoming[req.ID.raw]; dup {
			c.mu.Unlock()
			hcancel()
			<-c.slots
			return c.writeMessage(&Response{ID: req.ID, Error: NewError(CodeInvalidRequest, "duplicate request id "+req.ID.raw)})
		}
		c.incoming[req.ID.raw] = hcancel
		c.mu.Unlock()
	}
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer func() { <-c.slots }()
		defer hcancel()
		result, err := c.handler.Handle(hctx, req)
		if !req.IsCall() {
			return
		}
		c.mu.Lock()
		delete(c.incoming, req.ID.raw)
		c.mu.Unlock()
		if errors.Is(err, ErrNoResponse) {
			return
		}
		resp := &Response{ID: req.ID, Result: result, Encoded: c.opts.EncodedResults}
		if err != nil {
			resp = &Response{ID: req.ID, Error: AsWireError(err)}
		}
		_ = c.writeMessage(resp)
	}()
	return nil
}

// CancelIncoming cancels the context of the running incoming call id. It
// reports whether such a call was running. The handler still answers; what it
// answers is up to it (MCP says a cancelled request gets no response, which
// the handler's caller decides).
func (c *Conn) CancelIncoming(id ID) bool {
	c.mu.Lock()
	cancel, ok := c.incoming[id.raw]
	c.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

func (c *Conn) deliver(resp *Response) {
	c.mu.Lock()
	ch, ok := c.outgoing[resp.ID.raw]
	delete(c.outgoing, resp.ID.raw)
	c.mu.Unlock()
	if ok {
		ch <- resp
	}
}

// Call sends a request and waits for its response, decoding the result into
// result (when non-nil). A wire error is returned as *Error.
func (c *Conn) Call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := Int64ID(c.nextID)
	ch := make(chan *Response, 1)
	c.outgoing[id.raw] = ch
	c.mu.Unlock()

	forget := func() {
		c.mu.Lock()
		delete(c.outgoing, id.raw)
		c.mu.Unlock()
	}
	req, err := NewCall(id, method, params)
	if err != nil {
		forget()
		return err
	}
	if err := c.writeMessage(req); err != nil {
		forget()
		return err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if resp.Error != nil {
			return resp.Error
		}
		if result != nil {
			if err := json.Unmarshal(resp.Result, result); err != nil {
				return fmt.Errorf("jsonrpc: decode result of %s: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	req, err := NewNotification(method, params)
	if err != nil {
		return err
	}
	return c.writeMessage(req)
}

// Write sends an already built message (used by servers that answer on their
// own schedule).
func (c *Conn) Write(m Message) error { return c.writeMessage(m) }

func (c *Conn) writeMessage(m Message) error {
	if pw, ok := c.w.(partsWriter); ok {
		parts, err := EncodeMessageParts(m)
		if err != nil {
			return err
		}
		return pw.writeParts(parts)
	}
	b, err := EncodeMessage(m)
	if err != nil {
		return err
	}
	return c.w.WriteFrame(b)
}

// shutdown fails every outgoing call and cancels every incoming one.
func (c *Conn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, ch := range c.outgoing {
		close(ch)
		delete(c.outgoing, id)
	}
	for _, cancel := range c.incoming {
		cancel()
	}
}
