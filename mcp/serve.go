package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"winx/jsonrpc"
)

// handleModern serves one stateless 2026-07-28 request whose _meta was
// validated by prepareModern.
func (s *Server) handleModern(ctx context.Context, ex *exchange, req *jsonrpc.Request) (json.RawMessage, error) {
	if req.Method == "subscriptions/listen" {
		return s.listen(ctx, ex, req.Params)
	}
	return s.dispatch(ctx, ex, req)
}

// handleLegacy serves one request on an initialized (or implicit) legacy
// connection. A second initialize keeps its wire message, which says
// "session" as the revisions do.
func (s *Server) handleLegacy(ctx context.Context, ex *exchange, req *jsonrpc.Request) (json.RawMessage, error) {
	switch req.Method {
	case "initialize":
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session is already initialized")
	case "subscriptions/listen":
		return nil, methodNotFound(req.Method)
	}
	return s.dispatch(ctx, ex, req)
}

// handleInitialize answers initialize and returns the new legacy connection.
func (s *Server) handleInitialize(req *jsonrpc.Request) (json.RawMessage, *legacyConn, error) {
	res, lc, err := s.initialize(req.Params)
	if err != nil {
		return nil, nil, err
	}
	b, err := marshalPlain(res)
	if err != nil {
		return nil, nil, err
	}
	return b, lc, nil
}

// handleNotification applies a client notification to the legacy
// connection lc (nil in the modern era).
// cancel stops the in-flight request with the given id on this transport.
func (s *Server) handleNotification(lc *legacyConn, req *jsonrpc.Request, cancel func(jsonrpc.ID)) {
	switch req.Method {
	case "notifications/initialized":
		if lc != nil {
			lc.markInitialized()
		}
	case "notifications/cancelled":
		if id, ok := decodeCancelled(req.Params); ok {
			cancel(id)
		}
	default:
		// roots/list_changed and unknown notifications need no action;
		// JSON-RPC forbids answering notifications, so they are dropped.
		s.logger.Debug("notification ignored", "method", req.Method)
	}
}

// answerAfterCancel keeps the MCP rule that a cancelled request is not
// answered: when ctx ended because the client cancelled, drop the answer.
// A call cut short because the server is stopping was not cancelled by the
// client, which still waits for it: it gets its result or an error saying so.
func answerAfterCancel(ctx context.Context, res json.RawMessage, err error) (json.RawMessage, error) {
	if errors.Is(context.Cause(ctx), jsonrpc.ErrStopped) {
		if err == nil && res != nil {
			return res, nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "server stopping: the call was cut short")
	}
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, jsonrpc.ErrNoResponse
	}
	return res, err
}
