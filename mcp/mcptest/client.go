package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"winx/jsonrpc"
	"winx/mcp"
)

// Client is a minimal 2026-07-28 client for tests. It sends each request
// statelessly and in memory to an http.Handler (no listener), with the
// headers and _meta the revision requires, and reads JSON or SSE answers.
// It is safe for concurrent use.
type Client struct {
	// Handler serves the requests, usually an *mcp.HTTPHandler.
	Handler http.Handler
	// Capabilities is sent as _meta clientCapabilities; nil sends {}.
	Capabilities map[string]any

	nextID atomic.Int64
}

// Response is one answer: the HTTP status, exactly one of Result and Error,
// and the notifications that preceded it on an event stream.
type Response struct {
	Status        int
	Result        json.RawMessage
	Error         *jsonrpc.Error
	Notifications []*jsonrpc.Request
}

// Call sends method with params (nil means none besides _meta). Keys of
// params["_meta"] are merged over the standard ones. The routing headers are
// derived from params as the revision prescribes.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (*Response, error) {
	p := make(map[string]any, len(params)+1)
	for k, v := range params {
		p[k] = v
	}
	caps := c.Capabilities
	if caps == nil {
		caps = map[string]any{}
	}
	meta := map[string]any{
		mcp.MetaProtocolVersion:    mcp.Version20260728,
		mcp.MetaClientInfo:         map[string]string{"name": "mcptest", "version": "1.0.0"},
		mcp.MetaClientCapabilities: caps,
	}
	if extra, ok := params["_meta"].(map[string]any); ok {
		for k, v := range extra {
			meta[k] = v
		}
	}
	p["_meta"] = meta
	id := c.nextID.Add(1)
	call, err := jsonrpc.NewCall(jsonrpc.Int64ID(id), method, p)
	if err != nil {
		return nil, err
	}
	body, err := jsonrpc.EncodeMessage(call)
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", method)
	for _, field := range []string{"name", "uri", "taskId"} {
		if v, ok := params[field].(string); ok {
			req.Header.Set("Mcp-Name", v)
			break
		}
	}
	rec := httptest.NewRecorder()
	c.Handler.ServeHTTP(rec, req)
	return readResponse(rec, jsonrpc.Int64ID(id))
}

// readResponse decodes a recorded answer: one JSON message, or an event
// stream of notifications ending in the response with id.
func readResponse(rec *httptest.ResponseRecorder, id jsonrpc.ID) (*Response, error) {
	out := &Response{Status: rec.Code}
	mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	var frames [][]byte
	switch mt {
	case "application/json":
		frames = [][]byte{rec.Body.Bytes()}
	case "text/event-stream":
		sc := bufio.NewScanner(rec.Body)
		sc.Buffer(make([]byte, 0, 64<<10), mcp.DefaultMaxBodyBytes)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				frames = append(frames, []byte(strings.TrimSpace(data)))
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mcptest: HTTP %d with content type %q: %s", rec.Code, mt, rec.Body.Bytes())
	}
	for _, f := range frames {
		msg, err := jsonrpc.DecodeMessage(f)
		if err != nil {
			return nil, fmt.Errorf("mcptest: bad frame %q: %w", f, err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			if m.IsCall() {
				return nil, fmt.Errorf("mcptest: server sent a request on a 2026-07-28 response stream: %s", f)
			}
			out.Notifications = append(out.Notifications, m)
		case *jsonrpc.Response:
			if m.ID != id {
				return nil, fmt.Errorf("mcptest: response id %v, want %v", m.ID, id)
			}
			out.Result, out.Error = m.Result, m.Error
			return out, nil
		}
	}
	return nil, fmt.Errorf("mcptest: HTTP %d without a response to %v", rec.Code, id)
}

// Decode unmarshals the result into v, or returns the error response.
func (r *Response) Decode(v any) error {
	if r.Error != nil {
		return r.Error
	}
	return json.Unmarshal(r.Result, v)
}
