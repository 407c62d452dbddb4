package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"winx/jsonrpc"
)

// routeFlags say under which conditions a route is served. A route whose
// conditions do not hold answers as an unknown method (-32601), so that
// discovery and dispatch never disagree.
type routeFlags uint8

const (
	// modernOnly: a method of the stateless 2026-07-28 revision, unknown
	// on a legacy connection.
	modernOnly routeFlags = 1 << iota
	// legacyOnly: a method the 2026-07-28 revision removed, unknown to a
	// stateless request. Its handler may use the exchange's legacy
	// connection.
	legacyOnly
	// needsPrompts: served only when the registry has prompts (the
	// prompts capability is declared).
	needsPrompts
	// needsResources: served only when the registry has resources or
	// templates (the resources capability is declared).
	needsResources
	// needsTasksExtension: a stateless request must have declared the
	// tasks extension, else it gets tasksCapabilityError (-32021). A
	// legacy connection needs nothing: 2025-11-25 advertises tasks itself.
	needsTasksExtension
	// noServerInfo: the modern result carries no serverInfo in _meta. The
	// revision says a result should carry it, and server/discover and the
	// lists do; a tool's answer, which the model pays for on every call,
	// would repeat what the client already knows.
	noServerInfo
)

// routeFunc answers one request whose route was found: it decodes req's
// params and returns the result for dispatchResult to encode.
type routeFunc func(ctx context.Context, ex *exchange, req *jsonrpc.Request) (result, error)

// route is one row of the method table.
type route struct {
	method string
	flags  routeFlags
	handle routeFunc
}

// typed adapts fn to a routeFunc: params decode into a fresh P before fn
// runs; absent params leave it zero, undecodable ones are invalid params.
func typed[P any](fn func(ctx context.Context, ex *exchange, p *P) (result, error)) routeFunc {
	return func(ctx context.Context, ex *exchange, req *jsonrpc.Request) (result, error) {
		p := new(P)
		if err := decodeParams(req.Params, p); err != nil {
			return nil, err
		}
		return fn(ctx, ex, p)
	}
}

// list adapts a list handler: its params are listParams.
func list(fn func(ex *exchange, p *listParams) (result, error)) routeFunc {
	return typed(func(_ context.Context, ex *exchange, p *listParams) (result, error) { return fn(ex, p) })
}

// bare adapts a handler that reads no params: whatever they hold is ignored,
// as the revisions allow extra members.
func bare(fn func(ex *exchange) result) routeFunc {
	return func(_ context.Context, ex *exchange, _ *jsonrpc.Request) (result, error) {
		return fn(ex), nil
	}
}

// rawParams adapts a handler that decodes its own params: a tool call's
// arguments are checked against the tool's schema, a prompt's against its
// arguments, and a resource read finds its handler by URI.
func rawParams(fn func(ctx context.Context, ex *exchange, params json.RawMessage) (result, error)) routeFunc {
	return func(ctx context.Context, ex *exchange, req *jsonrpc.Request) (result, error) {
		return fn(ctx, ex, req.Params)
	}
}

// routes is the server's method table: one row per request method it
// answers through dispatch. Adding a method is adding a row.
//
// Not here, because the transports answer them before dispatch:
// initialize (it opens the legacy connection, and on one it is
// "session is already initialized"), subscriptions/listen (modern only,
// it streams instead of answering once) and the client's notifications
// (handleNotification).
func (s *Server) routes() []route {
	return []route{
		{method: "server/discover", flags: modernOnly, handle: bare(func(ex *exchange) result { return s.discover(ex) })},
		{method: "ping", flags: legacyOnly, handle: bare(func(*exchange) result { return &EmptyResult{} })},
		{method: "logging/setLevel", flags: legacyOnly, handle: typed(s.setLevel)},

		{method: "tools/list", handle: list(s.listTools)},
		{method: "tools/call", flags: noServerInfo, handle: rawParams(s.callTool)},

		{method: "prompts/list", flags: needsPrompts, handle: list(s.listPrompts)},
		{method: "prompts/get", flags: needsPrompts, handle: rawParams(s.getPrompt)},

		{method: "resources/list", flags: needsResources, handle: list(s.listResources)},
		{method: "resources/templates/list", flags: needsResources, handle: list(s.listResourceTemplates)},
		{method: "resources/read", flags: needsResources, handle: rawParams(s.readResource)},
		{method: "resources/subscribe", flags: needsResources | legacyOnly, handle: typed(s.subscribe(true))},
		{method: "resources/unsubscribe", flags: needsResources | legacyOnly, handle: typed(s.subscribe(false))},

		{method: "completion/complete", handle: typed(s.complete)},

		// The task methods (tasks.go): the flags carry the era and
		// extension rules, so each handler only answers.
		{method: "tasks/get", flags: needsTasksExtension, handle: typed(s.getTask)},
		{method: "tasks/update", flags: needsTasksExtension | modernOnly, handle: typed(s.updateTask)},
		{method: "tasks/cancel", flags: needsTasksExtension, handle: typed(s.cancelTask)},
		{method: "tasks/list", flags: legacyOnly, handle: bare(s.listLegacyTasks)},
		{method: "tasks/result", flags: legacyOnly, handle: typed(s.taskResult)},
	}
}

// routeTable indexes rows by method. Two rows for one method, or a row of
// both eras only, are a programming error: it panics.
func routeTable(rows []route) map[string]*route {
	table := make(map[string]*route, len(rows))
	for i := range rows {
		r := &rows[i]
		if _, dup := table[r.method]; dup {
			panic("mcp: two routes for method " + r.method)
		}
		if r.flags&(modernOnly|legacyOnly) == modernOnly|legacyOnly {
			panic("mcp: route " + r.method + " is both modern only and legacy only")
		}
		if r.handle == nil {
			panic("mcp: route " + r.method + " has no handler")
		}
		table[r.method] = r
	}
	return table
}

// servesIn reports whether r is a method of era e.
func (r *route) servesIn(e era) bool {
	switch e {
	case eraModern:
		return r.flags&legacyOnly == 0
	case eraLegacy:
		return r.flags&modernOnly == 0
	}
	panic(fmt.Sprintf("mcp: unknown era %d", e))
}

// lookup finds the route of method for ex, applying the row's conditions
// in the order the revisions' errors expect: an unknown method, one of the
// other era and one of an undeclared capability are all -32601; only a
// method that exists may then ask for a client capability.
func (s *Server) lookup(ex *exchange, method string) (*route, error) {
	r, ok := s.table[method]
	if !ok || !r.servesIn(ex.era) ||
		r.flags&needsPrompts != 0 && !s.registry.hasPrompts() ||
		r.flags&needsResources != 0 && !s.registry.hasResources() {
		return nil, methodNotFound(method)
	}
	if r.flags&needsTasksExtension != 0 && ex.era == eraModern && !ex.caps.HasExtension(TasksExtension) {
		return nil, tasksCapabilityError()
	}
	return r, nil
}
