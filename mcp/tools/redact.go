package tools

// The one redaction point of model-visible text: every tool's answer, its
// text blocks, every string of its structuredContent and every protocol
// error message pass redactResult on their way to the wire, whatever the
// tool did before. Tools may redact earlier (ReadFiles counts what it
// replaced); the rules are idempotent, so a placeholder is never matched
// again and this second net only catches what slipped through: a secret in
// a diff context line, a nearest candidate, an error echoing a path or a
// command, a screen.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"winx/evidence/redact"
	"winx/jsonrpc"
	"winx/mcp"
)

// redactingHandler wraps a tool handler so its answer leaves redacted.
func redactingHandler(r *redact.Redactor) func(string, mcp.ToolHandler) mcp.ToolHandler {
	return func(_ string, h mcp.ToolHandler) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			res, err := h(ctx, req)
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				c := *rpcErr
				c.Message, _ = r.String(c.Message)
				if len(c.Data) > 0 {
					c.Data = redactJSON(r, c.Data)
				}
				return redactResult(r, res), &c
			}
			return redactResult(r, res), err
		}
	}
}

// redactResult redacts every string of res in place and returns it.
func redactResult(r *redact.Redactor, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	// The output field usually is the text block itself: redact it once.
	seen := map[string]string{}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			orig := c.Text
			c.Text, _ = r.String(c.Text)
			seen[orig] = c.Text
		case *mcp.EmbeddedResource:
			if c.Resource.Text != nil {
				t, _ := r.String(*c.Resource.Text)
				c.Resource.Text = &t
			}
		}
	}
	switch sc := res.StructuredContent.(type) {
	case nil:
	case mcp.Envelope:
		res.StructuredContent = redactEnvelope(r, sc, seen)
	case *mcp.Envelope:
		e := redactEnvelope(r, *sc, seen)
		res.StructuredContent = &e
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			// Unmarshalable content would fail on the wire anyway; drop it
			// rather than risk sending it some other way.
			res.StructuredContent = nil
			break
		}
		res.StructuredContent = redactJSON(r, b)
	}
	return res
}

func redactEnvelope(r *redact.Redactor, e mcp.Envelope, seen map[string]string) mcp.Envelope {
	e.Message, _ = r.String(e.Message)
	if out, ok := seen[e.Output]; ok {
		e.Output = out
	} else {
		e.Output, _ = r.String(e.Output)
	}
	if e.NextAction != nil {
		na := *e.NextAction
		na.Instruction, _ = r.String(na.Instruction)
		if na.Arguments != nil {
			na.Arguments = redactArguments(r, na.Arguments)
		}
		e.NextAction = &na
	}
	if len(e.RequiredReads) > 0 {
		reads := make([]mcp.RequiredRead, len(e.RequiredReads))
		for i, rr := range e.RequiredReads {
			rr.Path, _ = r.String(rr.Path)
			reads[i] = rr
		}
		e.RequiredReads = reads
	}
	if e.Data != nil {
		if b, err := json.Marshal(e.Data); err == nil {
			if out := redactJSON(r, b); !bytes.Equal(out, b) {
				e.Data = out
			}
		} else {
			e.Data = nil
		}
	}
	return e
}

// redactJSON returns b with every string (keys included) redacted; b itself
// when nothing changed, so the common answer keeps its exact encoding.
func redactJSON(r *redact.Redactor, b []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return b
	}
	changed := false
	v = walkStrings(v, func(s string) string {
		out, n := r.String(s)
		if n > 0 {
			changed = true
		}
		return out
	})
	if !changed {
		return b
	}
	// Not json.Marshal: it would escape <, > and & as \u003c..., which
	// the answer's encoder (no HTML escaping) leaves as they are.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// redactArguments redacts a nextAction's arguments, whatever Go types the
// tool put in them; unchanged arguments keep their values.
func redactArguments(r *redact.Redactor, args map[string]any) map[string]any {
	b, err := json.Marshal(args)
	if err != nil {
		return map[string]any{}
	}
	out := redactJSON(r, b)
	if bytes.Equal(out, b) {
		return args
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return map[string]any{}
	}
	return m
}

func walkStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[f(k)] = walkStrings(x, f)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = walkStrings(x, f)
		}
		return out
	}
	return v
}
