package daemon

import (
	"context"
	"fmt"

	"winx/guardian/wire"
	"winx/jsonrpc"
)

// methodFunc answers one call of s: it decodes req's params, acts, and
// returns the result to encode. Its errors pass through toWireError.
type methodFunc func(s *Server, ctx context.Context, req *jsonrpc.Request) (any, error)

// method is one row of winxd's method table.
type method struct {
	name string
	call methodFunc
	// keyed: the params name a session key (EnsureParams.Key). The
	// operational log records hashes of the key and its principal, and
	// the outcome of a success as spawned or reused.
	keyed bool
}

// methods is winxd's method table, in the order the hello announces them:
// adding a method is adding a row. It takes no server, so that NewServer
// can announce the methods before the server exists.
func methods() []method {
	return []method{
		{name: MethodEnsure, call: typed((*Server).ensure), keyed: true},
		// list reads no params: whatever a peer sends is ignored.
		{name: MethodList, call: noParams((*Server).list)},
		{name: MethodShutdown, call: typed((*Server).requestShutdown)},
	}
}

// methodNames are the methods of the table, for the hello.
func methodNames() []string {
	rows := methods()
	names := make([]string, len(rows))
	for i, m := range rows {
		names[i] = m.name
	}
	return names
}

// methodTable indexes rows by name. Two rows for one name, or a row
// without a call, are a programming error: it panics.
func methodTable(rows []method) map[string]*method {
	table := make(map[string]*method, len(rows))
	for i := range rows {
		m := &rows[i]
		if _, dup := table[m.name]; dup {
			panic("daemon: two rows for method " + m.name)
		}
		if m.call == nil {
			panic("daemon: method " + m.name + " has no call")
		}
		table[m.name] = m
	}
	return table
}

// unknownMethod is the answer to a method without a row.
func unknownMethod(name string) error {
	return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "daemon: unknown method "+name)
}

// typed adapts fn to a methodFunc: params decode into a fresh P before fn
// runs (absent params leave it zero); params that do not decode are
// invalid params.
func typed[P any](fn func(s *Server, ctx context.Context, p *P) (any, error)) methodFunc {
	return func(s *Server, ctx context.Context, req *jsonrpc.Request) (any, error) {
		p := new(P)
		if err := decode(req.Params, p); err != nil {
			return nil, err
		}
		return fn(s, ctx, p)
	}
}

// noParams adapts fn, which reads no params, to a methodFunc.
func noParams(fn func(s *Server, ctx context.Context) (any, error)) methodFunc {
	return func(s *Server, ctx context.Context, _ *jsonrpc.Request) (any, error) {
		return fn(s, ctx)
	}
}

// ensure answers MethodEnsure. A malformed request is CodeRequest, before
// any socket is looked at.
func (s *Server) ensure(ctx context.Context, p *EnsureParams) (any, error) {
	if err := p.validate(); err != nil {
		return nil, jsonrpc.NewError(CodeRequest, err.Error())
	}
	er, err := s.Ensure(ctx, p)
	if err != nil {
		return nil, err
	}
	return er, nil
}

// list answers MethodList.
func (s *Server) list(ctx context.Context) (any, error) {
	var lr ListResult
	var err error
	lr.Guardians, lr.Unreachable, err = s.ops.Discover(ctx)
	if err != nil {
		return nil, err
	}
	return lr, nil
}

// requestShutdown answers MethodShutdown: Run stops with the reason, which
// names the peer that asked. The first request wins.
func (s *Server) requestShutdown(ctx context.Context, p *ShutdownParams) (any, error) {
	reason := "shutdown requested"
	if p.Reason != "" {
		reason += ": " + p.Reason
	}
	if peer, ok := wire.PeerFrom(ctx); ok {
		reason += fmt.Sprintf(" (by %s pid %d)", peer.Hello.Role, peer.Cred.PID)
	}
	select {
	case s.shutdown <- reason:
	default:
	}
	return struct{}{}, nil
}
