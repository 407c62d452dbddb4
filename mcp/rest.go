package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"strconv"

	"winx/jsonrpc"
)

// The REST tool API serves the tool catalog to automation that does not
// speak MCP: a plain JSON GET for the catalog, a plain JSON POST for a call,
// and an OpenAPI 3.1 description of both. It is a second front door to the
// same Server, not a second server: host and origin checks, authentication
// and the body limit are the Streamable HTTP handler's, the catalog is
// tools/list's, and a call is a stateless 2026-07-28 tools/call dispatched
// through Server.handleModern, so profiles, session keys, the tool observer
// (usage log) and the result envelope are exactly those of /mcp.
//
// Deliberate differences from /mcp: errors before the tool runs are HTTP
// statuses with a JSON body (RESTError) instead of JSON-RPC errors; a tool
// the caller's profile hides answers 404 like an unknown one (/mcp answers
// -32602 "unknown tool" for both, so neither reveals which tools exist);
// no progress or log notifications, no client input (the call declares no
// client capabilities) and no tasks.

// Paths of the REST tool API.
const (
	RESTToolsPath   = "/api/tools"
	RESTCallPath    = "/api/tools/call"
	RESTOpenAPIPath = "/api/openapi.json"
)

// RESTError is the body of every REST answer that is not a tool result.
type RESTError struct {
	Error RESTErrorBody `json:"error"`
}

// RESTErrorBody says what went wrong: Code is one of the REST error codes
// below, RPCCode the JSON-RPC code when the call failed inside the protocol
// layer.
type RESTErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	RPCCode int64  `json:"rpcCode,omitempty"`
	// Member names the body's member a bad_request is about, as a path
	// from the top ("name", "arguments.x"), when one is to blame.
	Member string `json:"member,omitempty"`
}

// Codes of RESTErrorBody.
const (
	RESTBadRequest       = "bad_request"
	RESTUnauthorized     = "unauthorized"
	RESTForbidden        = "forbidden"
	RESTNotFound         = "not_found"
	RESTUnknownTool      = "unknown_tool"
	RESTMethodNotAllowed = "method_not_allowed"
	RESTUnsupportedMedia = "unsupported_media_type"
	RESTBodyTooLarge     = "body_too_large"
	RESTInternal         = "internal_error"
)

// RESTHandler serves the REST tool API; mount it on "/api/".
type RESTHandler struct {
	// h supplies the checks every request passes on /mcp: Host, Origin,
	// authentication, the body limit. Its legacy connections are never used.
	h *HTTPHandler
}

// NewRESTHandler returns the REST handler for s with the same options as
// the Streamable HTTP handler it stands beside.
func NewRESTHandler(s *Server, opts *HTTPOptions) *RESTHandler {
	return &RESTHandler{h: NewHTTPHandler(s, opts)}
}

// ServeHTTP implements http.Handler.
func (rh *RESTHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := rh.h
	// The same checks, in the same order, as /mcp.
	caller, refused := h.admit(w, r)
	if refused != nil {
		code := RESTForbidden
		if refused.status == http.StatusUnauthorized {
			code = RESTUnauthorized
		}
		writeRESTError(w, refused.status, code, refused.message, 0)
		return
	}
	if r.Header.Get("Mcp-Method") != "" {
		// The admission gate trusts Mcp-Method to spot long-lived MCP
		// streams, which /mcp checks against the body; nothing here would,
		// so a REST request may not carry it at all.
		writeRESTError(w, http.StatusBadRequest, RESTBadRequest, "Mcp-Method is an /mcp header", 0)
		return
	}
	var want string
	switch r.URL.Path {
	case RESTToolsPath, RESTOpenAPIPath:
		want = http.MethodGet
	case RESTCallPath:
		want = http.MethodPost
	default:
		writeRESTError(w, http.StatusNotFound, RESTNotFound, "no such endpoint", 0)
		return
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		writeRESTError(w, http.StatusMethodNotAllowed, RESTMethodNotAllowed, "method not allowed; use "+want, 0)
		return
	}
	switch r.URL.Path {
	case RESTToolsPath:
		rh.list(w, caller)
	case RESTOpenAPIPath:
		rh.openAPI(w, caller)
	default:
		rh.call(w, r, caller)
	}
}

func writeRESTError(w http.ResponseWriter, status int, code, msg string, rpcCode int64) {
	writeRESTJSON(w, status, mustMarshal(RESTError{Error: RESTErrorBody{Code: code, Message: msg, RPCCode: rpcCode}}))
}

// writeBodyError answers a refused body: 400 naming the member at fault.
func writeBodyError(w http.ResponseWriter, e *bodyError) {
	writeRESTJSON(w, http.StatusBadRequest, mustMarshal(RESTError{Error: RESTErrorBody{Code: RESTBadRequest, Message: e.msg, Member: e.member}}))
}

func writeRESTJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}

// list answers GET /api/tools with what tools/list gives this caller.
func (rh *RESTHandler) list(w http.ResponseWriter, caller Caller) {
	ex := &exchange{era: eraModern, version: Version20260728, caller: caller, method: "tools/list"}
	res, err := rh.h.server.listTools(ex, nil)
	var b []byte
	if err == nil {
		b, err = marshalResult(res)
	}
	if err != nil {
		writeRESTError(w, http.StatusInternalServerError, RESTInternal, "internal error", 0)
		return
	}
	writeRESTJSON(w, http.StatusOK, b)
}

// restCall is the body of POST /api/tools/call.
type restCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// restCallParams are the tools/call params a REST call becomes: a
// stateless 2026-07-28 request that declares no client capabilities.
type restCallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"_meta"`
}

// restRequestID is the JSON-RPC id of every REST call; nothing answers it
// on the wire, the tools/call path only needs a valid one.
var restRequestID = jsonrpc.StringID("rest")

func (rh *RESTHandler) call(w http.ResponseWriter, r *http.Request, caller Caller) {
	s := rh.h.server
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeRESTError(w, http.StatusUnsupportedMediaType, RESTUnsupportedMedia, "content type must be application/json", 0)
		return
	}
	body, err := readBody(w, r, rh.h.opts.MaxBodyBytes)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRESTError(w, http.StatusRequestEntityTooLarge, RESTBodyTooLarge, "request body too large", 0)
			return
		}
		writeRESTError(w, http.StatusBadRequest, RESTBadRequest, "cannot read body", 0)
		return
	}
	in, bad := decodeRESTCall(body)
	if bad != nil {
		writeBodyError(w, bad)
		return
	}
	// The profile check of tools/call, asked first so that a hidden tool
	// gets the REST answer (404) instead of -32602.
	if _, ok := s.registry.lookupTool(caller.Profile, in.Name); !ok {
		writeRESTError(w, http.StatusNotFound, RESTUnknownTool, "unknown tool", 0)
		return
	}
	params := mustMarshal(restCallParams{Name: in.Name, Arguments: in.Arguments, Meta: map[string]any{
		MetaProtocolVersion:    Version20260728,
		MetaClientCapabilities: map[string]any{},
	}})
	req := &jsonrpc.Request{ID: restRequestID, Method: "tools/call", Params: params}
	meta, err := decodeMeta(params)
	if err != nil {
		panic("mcp: REST call params must carry _meta: " + err.Error())
	}
	ex, err := s.prepareModern(req, meta, caller, nil)
	if err == nil {
		var res json.RawMessage
		if res, err = s.handleModern(r.Context(), ex, req); err == nil {
			writeRESTJSON(w, http.StatusOK, res)
			return
		}
	}
	e := jsonrpc.AsWireError(err)
	status := http.StatusInternalServerError
	code := RESTInternal
	switch e.Code {
	case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest, CodeMissingRequiredClientCapability:
		status, code = http.StatusBadRequest, RESTBadRequest
	case jsonrpc.CodeMethodNotFound:
		status, code = http.StatusNotFound, RESTNotFound
	}
	writeRESTError(w, status, code, e.Message, e.Code)
}

// decodeRESTCall parses a call body strictly: one JSON object with a
// non-empty string name and an object (or absent, or null) arguments, no
// other member, no member spelt otherwise or named twice at any depth
// (checkMembers), and nothing after it. A non-nil bad says what is wrong.
func decodeRESTCall(body []byte) (in restCall, bad *bodyError) {
	refuse := func(msg, member string) (restCall, *bodyError) { return in, &bodyError{msg: msg, member: member} }
	if bad := checkMembers(body, reflect.TypeFor[restCall]()); bad != nil {
		return in, bad
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return refuse("body is not a JSON object", "")
		case errors.As(err, &typ) && typ.Field != "":
			return refuse(typ.Field+" has the wrong type", typ.Field)
		case errors.As(err, &typ):
			return refuse("body is not a JSON object", "")
		}
		// encoding/json reports an unknown member with a plain error.
		return refuse("body must have only name and arguments", "")
	}
	if _, err := dec.Token(); err != io.EOF {
		return refuse("body must hold one JSON object", "")
	}
	if in.Name == "" {
		return refuse("name is required", "name")
	}
	args := bytes.TrimSpace(in.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
		in.Arguments = json.RawMessage("{}")
	case args[0] != '{':
		return refuse("arguments must be an object", "arguments")
	default:
		in.Arguments = args
	}
	return in, nil
}

// openAPI answers GET /api/openapi.json: the REST API as this caller sees it.
func (rh *RESTHandler) openAPI(w http.ResponseWriter, caller Caller) {
	s := rh.h.server
	writeRESTJSON(w, http.StatusOK, openAPIDocument(s.info, s.registry.listTools(caller.Profile)))
}

// schemaNameUnsafe matches what an OpenAPI component name may not hold.
var schemaNameUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// openAPIDocument describes the two operations for exactly tools: the
// request body of a call is a oneOf of one component per tool, whose
// arguments are that tool's input schema (JSON Schema, which OpenAPI 3.1
// embeds as is).
func openAPIDocument(info Implementation, tools []Tool) []byte {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	jsonContent := func(schema any) map[string]any {
		return map[string]any{"application/json": map[string]any{"schema": schema}}
	}
	errResponse := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": jsonContent(ref("Error"))}
	}
	schemas := map[string]any{
		"Error": map[string]any{
			"type":     "object",
			"required": []string{"error"},
			"properties": map[string]any{"error": map[string]any{
				"type":     "object",
				"required": []string{"code", "message"},
				"properties": map[string]any{
					"code":    map[string]any{"type": "string"},
					"message": map[string]any{"type": "string"},
					"rpcCode": map[string]any{"type": "integer"},
					"member":  map[string]any{"type": "string"},
				},
			}},
		},
		"ToolList": map[string]any{
			"type":     "object",
			"required": []string{"tools"},
			"properties": map[string]any{"tools": map[string]any{
				"type":  "array",
				"items": map[string]any{"type": "object", "required": []string{"name", "inputSchema"}},
			}},
		},
		"CallToolResult": map[string]any{
			"type":        "object",
			"description": "The MCP tools/call result (2026-07-28), as /mcp answers it.",
			"required":    []string{"content"},
			"properties": map[string]any{
				"content":           map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
				"structuredContent": map[string]any{"type": "object"},
				"isError":           map[string]any{"type": "boolean"},
				"resultType":        map[string]any{"type": "string"},
				"_meta":             map[string]any{"type": "object"},
			},
		},
	}
	oneOf := make([]any, 0, len(tools))
	mapping := make(map[string]string, len(tools))
	used := make(map[string]bool, len(tools))
	for _, t := range tools {
		base := "call." + schemaNameUnsafe.ReplaceAllString(t.Name, "_")
		name := base
		for i := 2; used[name]; i++ {
			name = base + "." + strconv.Itoa(i)
		}
		used[name] = true
		input := t.InputSchema
		if len(input) == 0 {
			input = json.RawMessage(`{"type":"object"}`)
		}
		s := map[string]any{
			"type":                 "object",
			"title":                t.Name,
			"required":             []string{"name"},
			"additionalProperties": false,
			"properties": map[string]any{
				"name":      map[string]any{"const": t.Name},
				"arguments": input,
			},
		}
		if t.Description != "" {
			s["description"] = t.Description
		}
		schemas[name] = s
		oneOf = append(oneOf, ref(name))
		mapping[t.Name] = "#/components/schemas/" + name
	}
	callSchema := map[string]any{"not": map[string]any{}} // no tool: no valid call
	if len(oneOf) > 0 {
		callSchema = map[string]any{"oneOf": oneOf, "discriminator": map[string]any{"propertyName": "name", "mapping": mapping}}
	}
	title := info.Title
	if title == "" {
		title = info.Name
	}
	common := map[string]any{
		"401": errResponse("missing or wrong bearer token"),
		"403": errResponse("Host or Origin not allowed"),
		"429": map[string]any{"description": "over the request rate; see Retry-After"},
		"503": map[string]any{"description": "too busy or draining; see Retry-After"},
	}
	with := func(extra map[string]any) map[string]any {
		out := make(map[string]any, len(common)+len(extra))
		for k, v := range common {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       title + " REST tool API",
			"version":     info.Version,
			"description": "The caller's MCP tool catalog over plain JSON: the same authentication, profiles, limits and result envelope as /mcp.",
		},
		"security": []any{map[string]any{"bearer": []string{}}},
		"paths": map[string]any{
			RESTToolsPath: map[string]any{"get": map[string]any{
				"operationId": "listTools",
				"summary":     "The caller's tool catalog, as tools/list gives it",
				"responses": with(map[string]any{
					"200": map[string]any{"description": "the catalog", "content": jsonContent(ref("ToolList"))},
				}),
			}},
			RESTCallPath: map[string]any{"post": map[string]any{
				"operationId": "callTool",
				"summary":     "Call one tool; the answer is the tools/call result",
				"requestBody": map[string]any{"required": true, "content": jsonContent(callSchema)},
				"responses": with(map[string]any{
					"200": map[string]any{"description": "the tool's result, isError true included", "content": jsonContent(ref("CallToolResult"))},
					"400": errResponse("malformed body, missing name, unknown member or invalid arguments"),
					"404": errResponse("no such tool for this caller"),
					"413": errResponse("body too large"),
					"415": errResponse("content type is not application/json"),
				}),
			}},
		},
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
		},
	}
	return mustMarshal(doc)
}
