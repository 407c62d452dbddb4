package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"winx/jsonrpc"
)

// Client is one connection to a server, past its hello. Close it when done.
// Call gives the connection to one caller (a ctx that ends closes it);
// Request shares it between concurrent callers (see guardian/remote).
type Client struct {
	nc   *net.UnixConn
	conn *jsonrpc.Conn
	peer Hello
	ver  Version
	done chan struct{} // closed when the read loop ended

	closeOnce sync.Once
}

// Dial connects to path, checks that the server runs as this uid, and says
// hello as local, whose Secret the server requires. Errors: *DialError
// (wrapping ErrNoServer when nobody listens), *PeerError, *VersionError,
// ErrUnauthenticated, *ConfinedPeerError (this process runs inside a
// confined session), or the hello's wire error.
func Dial(ctx context.Context, path string, local Hello) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if noServer(err) {
			err = fmt.Errorf("%w: %w", ErrNoServer, err)
		}
		return nil, &DialError{Path: path, Err: err}
	}
	uc := nc.(*net.UnixConn)
	if _, err := checkPeer(uc); err != nil {
		uc.Close()
		return nil, err
	}
	c := &Client{nc: uc, done: make(chan struct{})}
	c.conn = jsonrpc.NewConn(
		newFrameReader(uc),
		jsonrpc.NewLengthWriter(uc, jsonrpc.MaxFrameSize),
		jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (json.RawMessage, error) {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "wire: clients serve no methods")
		}), nil)
	go func() {
		c.conn.Run(context.Background())
		close(c.done)
	}()
	var peer Hello
	if err := c.Call(ctx, MethodHello, local, &peer); err != nil {
		c.Close()
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == CodeVersionMismatch {
			var server Hello
			_ = json.Unmarshal(we.Data, &server)
			return nil, &VersionError{Local: local.Protocol, Peer: server.Protocol}
		}
		if errors.As(err, &we) && we.Code == CodeUnauthenticated {
			return nil, fmt.Errorf("%w (%s)", ErrUnauthenticated, path)
		}
		if errors.As(err, &we) && we.Code == CodeConfinedPeer {
			var d confinedData
			_ = json.Unmarshal(we.Data, &d)
			return nil, &ConfinedPeerError{PID: d.PID, Reason: d.Reason}
		}
		return nil, err
	}
	v, err := Negotiate(local.Protocol, peer.Protocol)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.peer, c.ver = peer, v
	return c, nil
}

// Peer is the server's hello.
func (c *Client) Peer() Hello { return c.peer }

// Version is the negotiated protocol version.
func (c *Client) Version() Version { return c.ver }

// Call sends one request and waits for its answer. When ctx ends first the
// connection is closed, so the server sees its caller leave and nothing of
// the abandoned call can reach a later one; the Client is then unusable.
// A connection the server closed gives ErrConnectionLost; a wire error is a
// *jsonrpc.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	defer stop()
	return c.Request(ctx, method, params, result)
}

// lost reports whether a call failed because the connection went away
// (rather than with an answer or an encoding error).
func lost(err error) bool {
	return errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)
}

// Request is Call for a connection shared by concurrent callers: its
// calls are told apart by request id, and a ctx that ends abandons only
// this call (the server finishes it and its answer is dropped), so the
// connection and every other call on it stay. Errors are those of Call.
func (c *Client) Request(ctx context.Context, method string, params, result any) error {
	err := c.conn.Call(ctx, method, params, result)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case lost(err):
		return fmt.Errorf("%w: %s: %w", ErrConnectionLost, method, err)
	}
	return err
}

// Done is closed once the connection ended (closed by either side); a
// shared connection is then replaced by a new one.
func (c *Client) Done() <-chan struct{} { return c.done }

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error { return c.conn.Notify(method, params) }

// Close ends the connection and waits for its read loop.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() { err = c.nc.Close() })
	<-c.done
	return err
}
