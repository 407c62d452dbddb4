package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// startPair connects a client and a server Conn over two io.Pipes with the
// newline framer and runs both. Cleanup closes both directions and checks
// that each Run returns nil.
func startPair(t *testing.T, h Handler, opts *ConnOptions) (client, server *Conn) {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	client = NewConn(NewLineReader(s2cR, 0), NewLineWriter(c2sW), HandlerFunc(notFound), nil)
	server = NewConn(NewLineReader(c2sR, 0), NewLineWriter(s2cW), h, opts)
	clientDone := runConn(client)
	serverDone := runConn(server)
	t.Cleanup(func() {
		// Closing the writers ends both reads with io.EOF and makes any late
		// write fail instead of blocking.
		c2sW.Close()
		s2cW.Close()
		if err := <-clientDone; err != nil {
			t.Errorf("client Run() = %v, want nil", err)
		}
		if err := <-serverDone; err != nil {
			t.Errorf("server Run() = %v, want nil", err)
		}
	})
	return client, server
}

func runConn(c *Conn) <-chan error {
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	return done
}

func notFound(ctx context.Context, req *Request) (json.RawMessage, error) {
	return nil, NewError(CodeMethodNotFound, "method not found")
}

// rawPeer drives one Conn from the test at the wire level: the test writes
// lines to the Conn and reads the frames it writes back.
type rawPeer struct {
	conn   *Conn
	inR    *io.PipeReader
	inW    *io.PipeWriter // test -> conn
	outW   *io.PipeWriter // conn -> test
	frames chan []byte
	done   <-chan error

	stopOnce sync.Once
	stopErr  error
}

// startRaw runs a Conn with handler h whose LineReader has limit maxLine.
func startRaw(t *testing.T, h Handler, opts *ConnOptions, maxLine int) *rawPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &rawPeer{
		conn:   NewConn(NewLineReader(inR, maxLine), NewLineWriter(outW), h, opts),
		inR:    inR,
		inW:    inW,
		outW:   outW,
		frames: make(chan []byte, 64),
	}
	p.done = runConn(p.conn)
	go func() {
		defer close(p.frames)
		lr := NewLineReader(outR, 0)
		for {
			frame, err := lr.ReadFrame()
			if err != nil {
				return
			}
			p.frames <- frame
		}
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *rawPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.inW, line+"\n"); err != nil {
		t.Fatalf("writing to the conn: %v", err)
	}
}

func (p *rawPeer) recv(t *testing.T) Message {
	t.Helper()
	frame, ok := <-p.frames
	if !ok {
		t.Fatal("conn output closed, want a frame")
	}
	m, err := DecodeMessage(frame)
	if err != nil {
		t.Fatalf("conn wrote %q: %v", frame, err)
	}
	return m
}

func (p *rawPeer) recvResponse(t *testing.T) *Response {
	t.Helper()
	m := p.recv(t)
	resp, ok := m.(*Response)
	if !ok {
		t.Fatalf("conn wrote %s, want a response", describe(m))
	}
	return resp
}

// stop ends the Conn's input and returns what Run returned.
func (p *rawPeer) stop() error { return p.fail(nil) }

// fail ends the Conn's input with err (io.EOF when nil) and returns what Run
// returned. Later writes by the Conn fail instead of blocking.
func (p *rawPeer) fail(err error) error {
	p.stopOnce.Do(func() {
		p.inW.CloseWithError(err)
		p.stopErr = <-p.done
		p.inR.Close()
		p.outW.Close()
	})
	return p.stopErr
}

// wantResult checks that resp answers id with result.
func wantResult(t *testing.T, resp *Response, id, result string) {
	t.Helper()
	if resp.ID.String() != id || resp.Error != nil || !sameJSON(resp.Result, json.RawMessage(result)) {
		t.Errorf("response = %s, want id %s and result %s", describe(resp), id, result)
	}
}

// wantError checks that resp answers id with an error of code.
func wantError(t *testing.T, resp *Response, id string, code int64) {
	t.Helper()
	if resp.ID.String() != id || resp.Error == nil || resp.Error.Code != code {
		t.Errorf("response = %s, want id %s and error code %d", describe(resp), id, code)
	}
}

func echo(ctx context.Context, req *Request) (json.RawMessage, error) {
	if req.Method != "echo" {
		return notFound(ctx, req)
	}
	return req.Params, nil
}

func TestConnCall(t *testing.T) {
	client, _ := startPair(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		if req.Method == "nothing" {
			return nil, nil
		}
		return echo(ctx, req)
	}), nil)
	ctx := t.Context()

	var got []string
	if err := client.Call(ctx, "echo", []string{"a", "b"}, &got); err != nil {
		t.Fatalf("Call(echo) error = %v, want nil", err)
	}
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("Call(echo, [a b]) = %q, want [a b]", got)
	}

	var empty map[string]any
	if err := client.Call(ctx, "nothing", nil, &empty); err != nil || len(empty) != 0 || empty == nil {
		t.Errorf("Call(nothing) = %v, %v, want an empty object and nil", empty, err)
	}

	if err := client.Call(ctx, "echo", map[string]int{"a": 1}, nil); err != nil {
		t.Errorf("Call(echo) with nil result = %v, want nil", err)
	}

	var wrongType int
	if err := client.Call(ctx, "echo", []int{1}, &wrongType); err == nil {
		t.Errorf("Call(echo, [1]) into an int = nil, want a decoding error")
	}

	err := client.Call(ctx, "missing", nil, nil)
	var we *Error
	if !errors.As(err, &we) || we.Code != CodeMethodNotFound {
		t.Errorf("Call(missing) = %v, want *Error with code %d", err, CodeMethodNotFound)
	}

	if err := client.Call(ctx, "echo", make(chan int), nil); err == nil {
		t.Errorf("Call with unmarshalable params = nil, want error")
	}
	if err := client.Call(ctx, "echo", 5, nil); err == nil || errors.As(err, &we) {
		t.Errorf("Call with scalar params = %v, want a local error before sending", err)
	}
	client.mu.Lock()
	pending := len(client.outgoing)
	client.mu.Unlock()
	if pending != 0 {
		t.Errorf("after all calls returned, %d outgoing calls are tracked, want 0", pending)
	}
}

// TestConnConcurrentCalls holds every handler until all have started, so the
// responses come back in an arbitrary order and must be matched by id.
func TestConnConcurrentCalls(t *testing.T) {
	const n = 32
	var started sync.WaitGroup
	started.Add(n)
	client, _ := startPair(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		started.Done()
		started.Wait()
		return req.Params, nil
	}), nil)

	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var got []int
			if err := client.Call(t.Context(), "echo", []int{i}, &got); err != nil {
				t.Errorf("Call(echo, [%d]) error = %v, want nil", i, err)
				return
			}
			if len(got) != 1 || got[0] != i {
				t.Errorf("Call(echo, [%d]) = %v, want [%d]", i, got, i)
			}
		})
	}
	wg.Wait()
}

func TestConnHandlerErrors(t *testing.T) {
	wire := NewErrorWithData(CodeInvalidParams, "bad uri", map[string]string{"uri": "x"})
	internal := NewError(CodeInternalError, "internal error")
	tests := []struct {
		name string
		err  error
		want *Error
	}{
		{"wire error reaches the peer", wire, wire},
		{"custom code", NewError(-32002, "resource not found"), NewError(-32002, "resource not found")},
		{"wrapped wire error", errors.Join(errors.New("context"), wire), wire},
		{"plain error hidden", errors.New("open /home/secret: permission denied"), internal},
		{"context error hidden", context.DeadlineExceeded, internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _ := startPair(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
				return json.RawMessage(`"ignored"`), tt.err
			}), nil)
			err := client.Call(t.Context(), "m", nil, nil)
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Call() error = %v, want *Error", err)
			}
			if got.Code != tt.want.Code || got.Message != tt.want.Message || !sameJSON(got.Data, tt.want.Data) {
				t.Errorf("Call() error = %+v (data %s), want %+v (data %s)", got, got.Data, tt.want, tt.want.Data)
			}
		})
	}
}

// TestConnNotification uses a bubble so that "no response" can be checked
// once every goroutine has settled.
func TestConnNotification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan *Request, 1)
		p := startRaw(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
			got <- req
			return json.RawMessage(`"a result nobody reads"`), errors.New("and an error nobody reads")
		}), nil, 0)

		p.send(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
		synctest.Wait()
		select {
		case frame := <-p.frames:
			t.Errorf("conn answered a notification with %s, want nothing", frame)
		default:
		}
		req := <-got
		if req.IsCall() || req.Method != "notifications/progress" || string(req.Params) != `{"progress":1}` {
			t.Errorf("handler got %s, want the notification", describe(req))
		}
	})
}

func TestConnNotify(t *testing.T) {
	got := make(chan *Request, 1)
	client, _ := startPair(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		got <- req
		return nil, nil
	}), nil)
	if err := client.Notify("notifications/initialized", nil); err != nil {
		t.Fatalf("Notify() error = %v, want nil", err)
	}
	req := <-got
	if req.IsCall() || req.Method != "notifications/initialized" || req.Params != nil {
		t.Errorf("handler got %s, want notifications/initialized without params", describe(req))
	}
	if err := client.Notify("m", make(chan int)); err == nil {
		t.Errorf("Notify with unmarshalable params = nil, want error")
	}
}

func TestConnNoResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startRaw(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
			if req.Method == "silent" {
				return json.RawMessage(`1`), ErrNoResponse
			}
			if req.Method == "wrapped" {
				return nil, errors.Join(errors.New("cancelled"), ErrNoResponse)
			}
			return json.RawMessage(`"spoken"`), nil
		}), nil, 0)

		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"silent"}`)
		p.send(t, `{"jsonrpc":"2.0","id":2,"method":"wrapped"}`)
		synctest.Wait()
		select {
		case frame := <-p.frames:
			t.Errorf("conn wrote %s, want no response", frame)
		default:
		}
		p.send(t, `{"jsonrpc":"2.0","id":3,"method":"loud"}`)
		wantResult(t, p.recvResponse(t), "3", `"spoken"`)
	})
}

func TestConnWrite(t *testing.T) {
	p := startRaw(t, HandlerFunc(notFound), nil, 0)
	if err := p.conn.Write(&Response{ID: StringID("later"), Result: json.RawMessage(`true`)}); err != nil {
		t.Fatalf("Write() error = %v, want nil", err)
	}
	wantResult(t, p.recvResponse(t), `"later"`, `true`)
	if err := p.conn.Write(&Request{}); err == nil {
		t.Errorf("Write(request without method) = nil, want error")
	}
}

func TestConnCancelIncoming(t *testing.T) {
	cause := make(chan error, 1)
	started := make(chan struct{}, 1)
	p := startRaw(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		cause <- ctx.Err()
		return nil, NewError(-32800, "request cancelled")
	}), nil, 0)

	if p.conn.CancelIncoming(Int64ID(1)) {
		t.Errorf("CancelIncoming(1) before any call = true, want false")
	}
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	<-started
	if p.conn.CancelIncoming(StringID("1")) {
		t.Errorf(`CancelIncoming("1") for a call with id 1 = true, want false`)
	}
	if !p.conn.CancelIncoming(Int64ID(1)) {
		t.Fatalf("CancelIncoming(1) while running = false, want true")
	}
	if err := <-cause; !errors.Is(err, context.Canceled) {
		t.Errorf("handler context error = %v, want context.Canceled", err)
	}
	wantError(t, p.recvResponse(t), "1", -32800)
	if p.conn.CancelIncoming(Int64ID(1)) {
		t.Errorf("CancelIncoming(1) after the response = true, want false")
	}
}

func TestConnDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		id   string
		code int64
	}{
		{"not json", `not json`, "null", CodeParseError},
		{"truncated", `{"jsonrpc":"2.0","id":9,"method":"echo"`, "null", CodeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, "null", CodeInvalidRequest},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, "null", CodeInvalidRequest},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"echo"}`, "null", CodeInvalidRequest},
		{"wrong version keeps id", `{"jsonrpc":"1.0","id":4,"method":"echo"}`, "4", CodeInvalidRequest},
		{"scalar params keep id", `{"jsonrpc":"2.0","id":"p","method":"echo","params":1}`, `"p"`, CodeInvalidRequest},
		{"response with result and error", `{"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"x"}}`, "5", CodeInvalidRequest},
	}
	var mu sync.Mutex
	var reported []error
	p := startRaw(t, HandlerFunc(echo), &ConnOptions{OnDecodeError: func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}}, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.send(t, tt.line)
			wantError(t, p.recvResponse(t), tt.id, tt.code)
			// The connection keeps serving.
			p.send(t, `{"jsonrpc":"2.0","id":"after","method":"echo","params":[1]}`)
			wantResult(t, p.recvResponse(t), `"after"`, `[1]`)
		})
	}
	if err := p.stop(); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != len(tests) {
		t.Fatalf("OnDecodeError called %d times, want %d", len(reported), len(tests))
	}
	for i, err := range reported {
		var de *DecodeError
		if !errors.As(err, &de) || de.Err.Code != tests[i].code {
			t.Errorf("OnDecodeError #%d got %v, want *DecodeError with code %d", i, err, tests[i].code)
		}
	}
}

func TestConnOversizeLine(t *testing.T) {
	p := startRaw(t, HandlerFunc(echo), nil, 64)
	lines := []string{
		strings.Repeat("x", 65),
		strings.Repeat("y", 100<<10), // longer than the 64 KiB read buffer
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("z", 64) + `"]}`,
	}
	for _, line := range lines {
		p.send(t, line)
		wantError(t, p.recvResponse(t), "null", CodeInvalidRequest)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"echo","params":["ok"]}`)
	wantResult(t, p.recvResponse(t), "2", `["ok"]`)
	if err := p.stop(); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
}

func TestConnDuplicateID(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	p := startRaw(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		started <- struct{}{}
		<-release
		return json.RawMessage(`"first"`), nil
	}), nil, 0)

	p.send(t, `{"jsonrpc":"2.0","id":"d","method":"slow"}`)
	<-started
	p.send(t, `{"jsonrpc":"2.0","id":"d","method":"slow"}`)
	wantError(t, p.recvResponse(t), `"d"`, CodeInvalidRequest)
	close(release)
	wantResult(t, p.recvResponse(t), `"d"`, `"first"`)

	// Once answered, the id may be used again.
	p.send(t, `{"jsonrpc":"2.0","id":"d","method":"slow"}`)
	<-started
	wantResult(t, p.recvResponse(t), `"d"`, `"first"`)
}

// TestConnResponseMatching checks that a response reaches a call only under
// the call's exact id, and that responses nobody waits for are dropped.
func TestConnResponseMatching(t *testing.T) {
	p := startRaw(t, HandlerFunc(notFound), nil, 0)
	p.send(t, `{"jsonrpc":"2.0","id":99,"result":"nobody asked"}`)

	type reply struct {
		got string
		err error
	}
	done := make(chan reply, 1)
	go func() {
		var got string
		err := p.conn.Call(context.Background(), "ask", map[string]int{"n": 1}, &got)
		done <- reply{got, err}
	}()
	req, ok := p.recv(t).(*Request)
	if !ok || !req.IsCall() || req.Method != "ask" || string(req.Params) != `{"n":1}` {
		t.Fatalf("conn sent %s, want the call to ask", describe(req))
	}
	id := req.ID.String()
	if strings.HasPrefix(id, `"`) {
		t.Fatalf("Call used id %s, want a number", id)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"`+id+`","result":"string id"}`)
	p.send(t, `{"jsonrpc":"2.0","id":`+id+`,"result":"number id"}`)
	r := <-done
	if r.err != nil || r.got != "number id" {
		t.Errorf("Call(ask) = %q, %v, want \"number id\", nil", r.got, r.err)
	}
}

// TestConnRunEOF checks that a clean end of input ends Run with nil and fails
// the calls still waiting.
func TestConnRunEOF(t *testing.T) {
	p := startRaw(t, HandlerFunc(notFound), nil, 0)
	const waiting = 3
	errs := make(chan error, waiting)
	for range waiting {
		go func() { errs <- p.conn.Call(context.Background(), "never", nil, nil) }()
	}
	for range waiting {
		if _, ok := p.recv(t).(*Request); !ok {
			t.Fatalf("conn sent a non-request, want the call")
		}
	}
	if err := p.stop(); err != nil {
		t.Errorf("Run() at end of input = %v, want nil", err)
	}
	for range waiting {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("pending Call() = %v, want ErrClosed", err)
		}
	}
	if err := p.conn.Call(context.Background(), "late", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call() after Run returned = %v, want ErrClosed", err)
	}
}

func TestConnRunReadError(t *testing.T) {
	p := startRaw(t, HandlerFunc(notFound), nil, 0)
	boom := errors.New("boom")
	if err := p.fail(boom); !errors.Is(err, boom) {
		t.Errorf("Run() after a read error = %v, want %v", err, boom)
	}
}

// TestConnRunDrain checks what happens to running calls when the input ends:
// after a clean end they get DrainTimeout to answer and are then cancelled;
// after a read error they are cancelled at once. A bubble keeps the clock fake.
func TestConnRunDrain(t *testing.T) {
	const drain = time.Minute
	boom := errors.New("boom")
	tests := []struct {
		name        string
		method      string // "answers" finishes once released; "stuck" waits for cancellation
		endErr      error  // nil closes the input cleanly
		wantRun     error
		wantElapsed time.Duration
		wantResp    *Response
	}{
		{"answer after a clean end", "answers", nil, nil, 0,
			&Response{ID: rawID("1"), Result: json.RawMessage(`"answered"`)}},
		{"cancelled after DrainTimeout", "stuck", nil, nil, drain,
			&Response{ID: rawID("1"), Error: NewError(-32800, "cancelled")}},
		{"cancelled at once after a read error", "stuck", boom, boom, 0,
			&Response{ID: rawID("1"), Error: NewError(-32800, "cancelled")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started := make(chan struct{})
				release := make(chan struct{})
				p := startRaw(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
					close(started)
					if req.Method == "answers" {
						<-release
						return json.RawMessage(`"answered"`), nil
					}
					<-ctx.Done()
					return nil, NewError(-32800, "cancelled")
				}), &ConnOptions{DrainTimeout: drain}, 0)
				p.send(t, `{"jsonrpc":"2.0","id":1,"method":"`+tt.method+`"}`)
				<-started

				start := time.Now()
				p.inW.CloseWithError(tt.endErr)
				synctest.Wait() // Run has seen the end of its input
				close(release)
				resp := p.recvResponse(t)
				if err := p.stop(); !errors.Is(err, tt.wantRun) {
					t.Errorf("Run() = %v, want %v", err, tt.wantRun)
				}
				if got := time.Since(start); got != tt.wantElapsed {
					t.Errorf("Run took %v after the input ended, want %v", got, tt.wantElapsed)
				}
				if !sameMessage(resp, tt.wantResp) {
					t.Errorf("response = %s, want %s", describe(resp), describe(tt.wantResp))
				}
			})
		})
	}
}

func TestConnMaxInFlight(t *testing.T) {
	const limit, calls = 2, 10
	var running, peak atomic.Int32
	client, _ := startPair(t, HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		return nil, nil
	}), &ConnOptions{MaxInFlight: limit})
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if err := client.Call(t.Context(), "m", nil, nil); err != nil {
				t.Errorf("Call() error = %v, want nil", err)
			}
		})
	}
	wg.Wait()
	if got := peak.Load(); got > limit {
		t.Errorf("%d handlers ran at once, want at most %d", got, limit)
	}
}

// TestConnCallDeadline uses a bubble so the deadline passes without waiting.
func TestConnCallDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := startRaw(t, HandlerFunc(notFound), nil, 0)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- p.conn.Call(ctx, "slow", nil, nil) }()
		req := p.recv(t).(*Request)
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Call() past its deadline = %v, want context.DeadlineExceeded", err)
		}
		p.conn.mu.Lock()
		pending := len(p.conn.outgoing)
		p.conn.mu.Unlock()
		if pending != 0 {
			t.Errorf("after a timed-out call, %d outgoing calls are tracked, want 0", pending)
		}

		// A late answer is dropped and the conn keeps working.
		p.send(t, `{"jsonrpc":"2.0","id":`+req.ID.String()+`,"result":"late"}`)
		go func() { errc <- p.conn.Call(t.Context(), "next", nil, nil) }()
		next := p.recv(t).(*Request)
		p.send(t, `{"jsonrpc":"2.0","id":`+next.ID.String()+`,"result":{}}`)
		if err := <-errc; err != nil {
			t.Errorf("Call() after a timed-out call = %v, want nil", err)
		}
	})
}

// TestConnLengthFramer runs a call over the daemon wire and checks that an
// oversize length prefix is fatal there.
func TestConnLengthFramer(t *testing.T) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	const limit = 1 << 10
	client := NewConn(NewLengthReader(s2cR, limit), NewLengthWriter(c2sW, limit), HandlerFunc(notFound), nil)
	server := NewConn(NewLengthReader(c2sR, limit), NewLengthWriter(s2cW, limit), HandlerFunc(echo), nil)
	clientDone := runConn(client)
	serverDone := runConn(server)

	var got map[string]string
	if err := client.Call(t.Context(), "echo", map[string]string{"k": "v"}, &got); err != nil || got["k"] != "v" {
		t.Errorf("Call(echo) over length frames = %v, %v, want map[k:v], nil", got, err)
	}
	if err := client.Call(t.Context(), "echo", []string{strings.Repeat("x", limit)}, nil); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("Call() with a frame over the limit = %v, want ErrFrameTooLarge", err)
	}

	// A lying peer: a header over the limit ends the server's Run.
	if _, err := c2sW.Write([]byte{0, 0, 0xff, 0xff}); err != nil {
		t.Fatalf("writing header: %v", err)
	}
	if err := <-serverDone; !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("server Run() after an oversize header = %v, want ErrFrameTooLarge", err)
	}
	c2sW.Close()
	s2cW.Close()
	if err := <-clientDone; err != nil {
		t.Errorf("client Run() = %v, want nil", err)
	}
}

// TestConnRunStop stops Run by its context while its read blocks (the
// input stays open, as a stdio client's does when it sends SIGTERM): Run
// returns without the input ending, and running calls get StopGrace.
func TestConnRunStop(t *testing.T) {
	const grace = 2 * time.Second
	tests := []struct {
		name        string
		method      string // "answers" finishes once released; "stuck" waits for cancellation
		grace       time.Duration
		wantElapsed time.Duration
		wantResp    *Response
	}{
		{"answer within StopGrace", "answers", grace, 0,
			&Response{ID: rawID("1"), Result: json.RawMessage(`"answered"`)}},
		{"cancelled after StopGrace", "stuck", grace, grace,
			&Response{ID: rawID("1"), Error: NewError(-32800, "cancelled")}},
		{"no StopGrace cancels at once", "stuck", 0, 0,
			&Response{ID: rawID("1"), Error: NewError(-32800, "cancelled")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				defer inW.Close()
				started := make(chan struct{})
				release := make(chan struct{})
				conn := NewConn(NewLineReader(inR, 0), NewLineWriter(outW), HandlerFunc(func(ctx context.Context, req *Request) (json.RawMessage, error) {
					close(started)
					if req.Method == "answers" {
						<-release
						return json.RawMessage(`"answered"`), nil
					}
					<-ctx.Done()
					return nil, NewError(-32800, "cancelled")
				}), &ConnOptions{StopGrace: tt.grace})
				ctx, stop := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- conn.Run(ctx) }()
				frames := make(chan []byte, 4)
				go func() {
					lr := NewLineReader(outR, 0)
					for {
						f, err := lr.ReadFrame()
						if err != nil {
							close(frames)
							return
						}
						frames <- f
					}
				}()
				if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"`+tt.method+`"}`+"\n"); err != nil {
					t.Fatal(err)
				}
				<-started

				start := time.Now()
				stop()
				synctest.Wait() // Run has seen the stop
				close(release)
				frame := <-frames
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("Run() = %v, want %v", err, context.Canceled)
				}
				if got := time.Since(start); got != tt.wantElapsed {
					t.Errorf("Run took %v after the stop, want %v", got, tt.wantElapsed)
				}
				resp, err := DecodeMessage(frame)
				if err != nil || !sameMessage(resp, tt.wantResp) {
					t.Errorf("response = %q (%v), want %s", frame, err, describe(tt.wantResp))
				}
				outW.Close()
			})
		})
	}
}
