package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"winx/jsonrpc"
)

// Limits of a server.
const (
	// DefaultMaxConns bounds concurrent connections when ServeOptions
	// gives none; further connections are closed at once.
	DefaultMaxConns = 64
	// HelloTimeout is how long a new connection may take to say hello.
	HelloTimeout = 10 * time.Second
	// WriteTimeout bounds writing one frame to a peer that stopped reading.
	WriteTimeout = 10 * time.Second
	// goneDrain is how long running calls may still answer after the peer
	// closed its end: the protocol's clients never half-close, so end of
	// input means the caller left and its calls are cancelled at once.
	goneDrain = time.Millisecond
	// refuseLinger is how long a connection refused for its secret stays
	// open so that the refusal reaches the peer.
	refuseLinger = 50 * time.Millisecond
)

// ServeOptions tune Serve; nil means defaults.
type ServeOptions struct {
	Logger *slog.Logger
	// OnReject is told of every connection refused for its peer (a
	// *PeerError) or ended by a framing error (a *jsonrpc.FrameTooLargeError
	// or a truncated frame). It runs on the connection's goroutine.
	OnReject func(error)
	// MaxConns bounds concurrent connections; zero means DefaultMaxConns.
	MaxConns int
	// Secret is the wire secret every hello must carry (compared in
	// constant time). It is required: Serve refuses to start without one.
	Secret string
	// EncodedResults says the handler's results come from a JSON encoder
	// (valid by construction), so they are written without being scanned
	// again: a large command output is then checked once, when encoded.
	EncodedResults bool
	// Admit, when set, judges the process of each connection once, when
	// its hello carried the secret: /proc is read then (confinement and
	// ancestry, pinned by the peer's pidfd where the kernel has one; see
	// PeerProcess) and Admit decides. A refused hello (or a peer that is
	// gone or cannot be read) is answered with CodeConfinedPeer, logged
	// and told to OnReject, and the connection closes; an admitted one is
	// never judged again, so requests pay nothing for it. Nil admits
	// every peer that has the secret.
	Admit AdmitFunc
	// Proc is where Admit's readings come from; the zero value is /proc.
	Proc Proc
}

type peerKey struct{}

// Peer is what a handler knows about the caller.
type Peer struct {
	Hello   Hello   // as the peer sent it
	Version Version // negotiated
	Cred    Cred    // from the kernel
}

// PeerFrom returns the caller of a request served by Serve.
func PeerFrom(ctx context.Context) (Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(Peer)
	return p, ok
}

// Serve accepts connections on ln until ctx is done, then closes ln (which
// unlinks the socket), stops reading from every connection, lets their
// handlers answer and returns nil. Each connection is checked by uid, must
// say hello first with the wire secret (answered with local, without its
// secret) and then has its calls answered by h with the caller in the
// context (PeerFrom). A hello without the secret is answered with
// CodeUnauthenticated and the connection closed; so is a hello whose
// caller opts.Admit refuses, with CodeConfinedPeer. A failing connection never
// affects another. Without opts.Secret, Serve closes ln and returns an error
// wrapping ErrNoSecret.
func Serve(ctx context.Context, ln *net.UnixListener, local Hello, h jsonrpc.Handler, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if !ValidSecret(o.Secret) {
		ln.Close()
		return fmt.Errorf("%w: a server needs one to authenticate its peers", ErrNoSecret)
	}
	local.Secret = ""
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	slots := make(chan struct{}, o.MaxConns)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// EMFILE and friends: back off instead of spinning.
			o.Logger.Warn("accept failed", "err", err)
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			o.Logger.Warn("connection refused: too many connections", "limit", o.MaxConns)
			c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			serveConn(ctx, c, local, h, &o)
		}()
	}
}

// serveConn runs one connection to its end.
func serveConn(ctx context.Context, c *net.UnixConn, local Hello, h jsonrpc.Handler, o *ServeOptions) {
	defer c.Close()
	cred, err := checkPeer(c)
	if err != nil {
		o.Logger.Warn("connection refused", "err", err)
		if o.OnReject != nil {
			o.OnReject(err)
		}
		return
	}
	st := &connState{c: c, cred: cred, secret: o.Secret, admit: o.Admit, proc: o.Proc, log: o.Logger, onReject: o.OnReject}
	st.setReadDeadline(time.Now().Add(HelloTimeout))
	stop := context.AfterFunc(ctx, st.shutdown)
	defer stop()

	conn := jsonrpc.NewConn(
		newFrameReader(c),
		jsonrpc.NewLengthWriter(deadlineWriter{c}, jsonrpc.MaxFrameSize),
		st.handler(local, h),
		&jsonrpc.ConnOptions{
			DrainTimeout:   goneDrain,
			EncodedResults: o.EncodedResults,
			OnDecodeError:  func(err error) { o.Logger.Debug("undecodable frame", "err", err) },
		})
	if err := conn.Run(ctx); err != nil && ctx.Err() == nil && !st.stopped() {
		var tooLarge *jsonrpc.FrameTooLargeError
		if errors.As(err, &tooLarge) || !errors.Is(err, net.ErrClosed) {
			o.Logger.Warn("connection ended", "err", err)
			if o.OnReject != nil {
				o.OnReject(err)
			}
		}
	}
}

// connState is one connection's hello state and deadline control.
type connState struct {
	c        *net.UnixConn
	cred     Cred
	secret   string
	admit    AdmitFunc // nil admits every peer with the secret
	proc     Proc
	log      *slog.Logger
	onReject func(error)

	mu sync.Mutex // guards the fields below
	// peer is set once the hello succeeded; nil before.
	peer *Peer
	// down is set when the server stops; the read deadline then stays in
	// the past.
	down bool
	// refused is set by a refused hello (no secret, or a confined
	// caller) to the answer every later hello gets: the connection
	// answers nothing more and closes.
	refused *jsonrpc.Error
}

func (st *connState) setReadDeadline(t time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.down {
		st.c.SetReadDeadline(t)
	}
}

func (st *connState) shutdown() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.down = true
	st.c.SetReadDeadline(time.Now())
}

func (st *connState) stopped() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.down
}

func (st *connState) handler(local Hello, h jsonrpc.Handler) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
		if req.Method == MethodHello {
			if !req.IsCall() {
				return nil, nil
			}
			return st.hello(local, req.Params)
		}
		st.mu.Lock()
		p := st.peer
		st.mu.Unlock()
		if p == nil {
			if !req.IsCall() {
				return nil, nil // notifications before hello are dropped
			}
			return nil, jsonrpc.NewError(CodeHelloRequired, ErrHelloRequired.Error())
		}
		return h.Handle(context.WithValue(ctx, peerKey{}, *p), req)
	})
}

func (st *connState) hello(local Hello, params json.RawMessage) (json.RawMessage, error) {
	st.mu.Lock()
	refused := st.refused
	st.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	peer, err := decodeHello(params)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, err.Error())
	}
	if !SameSecret(peer.Secret, st.secret) {
		return nil, st.refuse(jsonrpc.NewError(CodeUnauthenticated, ErrUnauthenticated.Error()))
	}
	peer.Secret = ""
	if err := st.judge(); err != nil {
		st.log.Warn("connection refused", "pid", st.cred.PID, "role", clipRole(peer.Role), "err", err)
		if st.onReject != nil {
			st.onReject(err)
		}
		return nil, st.refuse(confinedRefusal(err))
	}
	v, err := Negotiate(local.Protocol, peer.Protocol)
	if err != nil {
		return nil, versionRefusal(local, err)
	}
	st.mu.Lock()
	st.peer = &Peer{Hello: peer, Version: v, Cred: st.cred}
	st.mu.Unlock()
	// Calls may wait long (a command running for minutes): after the hello
	// the connection has no read deadline, only the caller's patience.
	st.setReadDeadline(time.Time{})
	b, err := json.Marshal(local)
	if err != nil {
		return nil, fmt.Errorf("wire: encode hello: %w", err)
	}
	return b, nil
}

// refuse makes answer the last word of the connection: one try per
// connection, the answer goes out, then the connection closes (the delay
// lets the answer be written first; until then every call is refused for
// want of a hello).
func (st *connState) refuse(answer *jsonrpc.Error) *jsonrpc.Error {
	st.mu.Lock()
	st.refused = answer
	st.mu.Unlock()
	time.AfterFunc(refuseLinger, st.shutdown)
	return answer
}

// judge runs the admission of the connection's peer, once: the hello is
// the only call that reaches it, and a refused hello ends the connection.
func (st *connState) judge() *ConfinedPeerError {
	if st.admit == nil {
		return nil
	}
	p, err := inspectPeer(st.c, st.cred, st.proc)
	if err != nil {
		return refusal(st.cred.PID, err)
	}
	if err := st.admit(p); err != nil {
		return refusal(st.cred.PID, err)
	}
	return nil
}

// maxLoggedRole bounds the hello role a refusal logs: the peer chose it.
const maxLoggedRole = 64

func clipRole(r string) string {
	if len(r) > maxLoggedRole {
		return r[:maxLoggedRole] + "…"
	}
	return r
}

// frameReadBuffer is the read buffer of a connection: a frame's length
// prefix and a small frame's payload (every request, most answers) come in
// with one read instead of two; a larger payload is read into its own
// buffer directly.
const frameReadBuffer = 4 << 10

// newFrameReader reads length-prefixed frames from c through a buffer of
// frameReadBuffer bytes. Deadlines set on c apply to its reads as before.
func newFrameReader(c io.Reader) *jsonrpc.LengthReader {
	return jsonrpc.NewLengthReader(bufio.NewReaderSize(c, frameReadBuffer), jsonrpc.MaxFrameSize)
}

// deadlineWriter bounds each write, so a peer that stops reading cannot
// hold a handler forever.
type deadlineWriter struct{ c *net.UnixConn }

func (w deadlineWriter) Write(p []byte) (int, error) {
	w.c.SetWriteDeadline(time.Now().Add(WriteTimeout))
	return w.c.Write(p)
}
