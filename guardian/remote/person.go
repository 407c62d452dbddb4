package remote

import (
	"context"
	"time"

	"winx/guardian"
	"winx/guardian/wire"
)

// PersonTerminal is a person's attachment to a guardian's session (winx
// attach --interactive), on a connection of its own: the wire admits it as
// it admits the adapter (same uid, the wire secret, a caller outside every
// confined session). The attachment ends with Detach, with the connection
// (a read in flight sees its caller leave), or when no read came for the
// session's lease.
type PersonTerminal struct {
	c      *wire.Client
	socket string
	id     string
	offset uint64
}

// AttachPerson attaches a person whose terminal is rows x cols to the
// session on socket. A session that has a person already refuses with an
// error matching guardian.ErrPersonAttached.
func AttachPerson(ctx context.Context, socket string, opts *ClientOptions, rows, cols int) (*PersonTerminal, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.Role == "" {
		o.Role = wire.RoleAdapter
	}
	c, err := wire.Dial(ctx, socket, wire.NewHello(o.Role, o.Build, nil).WithSecret(o.Secret))
	if err != nil {
		return nil, fromWireError(socket, err)
	}
	if !c.Peer().Has(MethodPersonAttach) {
		c.Close()
		return nil, ErrUnsupported
	}
	var res personAttachResult
	if err := c.Request(ctx, MethodPersonAttach, &personAttachParams{Rows: rows, Cols: cols}, &res); err != nil {
		c.Close()
		return nil, fromWireError(socket, err)
	}
	return &PersonTerminal{c: c, socket: socket, id: res.ID, offset: res.Offset}, nil
}

// Read waits up to wait for the session's output and returns it; Read is
// called by one goroutine at a time.
func (t *PersonTerminal) Read(ctx context.Context, wait time.Duration) (guardian.PersonChunk, error) {
	var res personReadResult
	err := t.c.Request(ctx, MethodPersonRead, &personReadParams{ID: t.id, Offset: t.offset, WaitMS: waitMS(wait)}, &res)
	if err != nil {
		return guardian.PersonChunk{}, fromWireError(t.socket, err)
	}
	t.offset = res.Offset
	return guardian.PersonChunk{Data: res.Data, Offset: res.Offset, Dropped: res.Dropped, ShellExited: res.ShellExited}, nil
}

// Write types b into the session's terminal.
func (t *PersonTerminal) Write(ctx context.Context, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), guardian.MaxPersonWrite)
		if err := t.c.Request(ctx, MethodPersonWrite, &personWriteParams{ID: t.id, Data: b[:n]}, nil); err != nil {
			return fromWireError(t.socket, err)
		}
		b = b[n:]
	}
	return nil
}

// Resize passes the person's terminal size to the session's PTY.
func (t *PersonTerminal) Resize(ctx context.Context, rows, cols int) error {
	return fromWireError(t.socket, t.c.Request(ctx, MethodPersonResize, &personResizeParams{ID: t.id, Rows: rows, Cols: cols}, nil))
}

// Detach ends the attachment and closes the connection.
func (t *PersonTerminal) Detach(ctx context.Context) error {
	err := t.c.Request(ctx, MethodPersonDetach, &personIDParams{ID: t.id}, nil)
	t.c.Close()
	if err != nil {
		return fromWireError(t.socket, err)
	}
	return nil
}

// Done is closed once the connection to the guardian ended.
func (t *PersonTerminal) Done() <-chan struct{} { return t.c.Done() }

// Close closes the connection; the guardian ends the attachment with it.
func (t *PersonTerminal) Close() error { return t.c.Close() }
