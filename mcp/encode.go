package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// The answer path writes the JSON of tool results and tools/list itself:
// encoding/json would escape a large text once, then scan it again to
// compact the marshaller's output, and a second time for the structured
// copy. Here each text is escaped once, straight into the answer, with the
// bytes a json.Encoder with SetEscapeHTML(false) gives: the answers go to
// programs, not into HTML, and "\u003c" for each "<" of a diff or a generic
// type would cost the model five bytes more.

// appender is a result that writes its own compact, valid JSON.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// marshalResult encodes a result, through appendJSON when it has one.
func marshalResult(res result) ([]byte, error) {
	if a, ok := res.(appender); ok {
		return a.appendJSON(make([]byte, 0, sizeHint(res)))
	}
	return marshalPlain(res)
}

// marshalPlain is json.Marshal without HTML escaping: <, > and & stay as
// they are. Every JSON the server answers with goes through it.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sizeHint guesses the encoded size of a result, so the answer is built
// in one buffer: its texts, escaping included, and a margin.
func sizeHint(res result) int {
	n := 1024
	if w, ok := res.(*callToolWire); ok && w.CallToolResult != nil {
		for _, c := range w.Content {
			if t, ok := c.(*TextContent); ok {
				n += len(t.Text) + len(t.Text)/8
			}
		}
		switch e := w.StructuredContent.(type) {
		case Envelope:
			n += len(e.Output) + len(e.Output)/8
		case *Envelope:
			if e != nil {
				n += len(e.Output) + len(e.Output)/8
			}
		}
	}
	return n
}

// appendHeader writes the result header's members, each followed by a comma.
func appendHeader(b []byte, h *ResultHeader) ([]byte, error) {
	if h.ResultType != "" {
		b = append(b, `"resultType":`...)
		b = appendString(b, h.ResultType)
		b = append(b, ',')
	}
	if len(h.Meta) > 0 {
		m, err := marshalPlain(h.Meta)
		if err != nil {
			return nil, err
		}
		b = append(b, `"_meta":`...)
		b = append(b, m...)
		b = append(b, ',')
	}
	return b, nil
}

func (w *callToolWire) appendJSON(b []byte) ([]byte, error) {
	if w.CallToolResult == nil {
		return marshalPlain(w)
	}
	b = append(b, '{')
	b, err := appendHeader(b, &w.ResultHeader)
	if err != nil {
		return nil, err
	}
	b = append(b, `"content":`...)
	var first escaped
	if w.Content == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range w.Content {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendContent(b, c, &first); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if w.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if b, err = appendStructured(b, w.StructuredContent, first); err != nil {
			return nil, err
		}
	}
	if w.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// escaped is a text already escaped into the answer: b[start:end] is its
// JSON string. An Envelope's output usually is the first text block itself;
// it is then copied rather than escaped a second time.
type escaped struct {
	text       string
	start, end int
	ok         bool
}

// appendString appends s as appendString does, copying the escaped bytes of
// e when s is e's text.
func (e escaped) appendString(b []byte, s string) []byte {
	if e.ok && len(s) == len(e.text) && s == e.text {
		return append(b, b[e.start:e.end]...)
	}
	return appendString(b, s)
}

// appendContent writes one content block; a plain text block without
// reflection. The first text block is noted in first.
func appendContent(b []byte, c Content, first *escaped) ([]byte, error) {
	if t, ok := c.(*TextContent); ok && t != nil && t.Annotations == nil {
		b = append(b, `{"type":"text","text":`...)
		start := len(b)
		b = appendString(b, t.Text)
		if !first.ok {
			*first = escaped{text: t.Text, start: start, end: len(b), ok: true}
		}
		return append(b, '}'), nil
	}
	m, err := marshalPlain(c)
	if err != nil {
		return nil, err
	}
	return append(b, m...), nil
}

// outputTail is how an Envelope's JSON ends when its Output is empty:
// Output is its last member.
const outputTail = `"output":""}`

// appendStructured writes structuredContent; an Envelope's output text is
// escaped once, after the small members went through encoding/json, or
// copied from prior when it is the same text.
func appendStructured(b []byte, v any, prior escaped) ([]byte, error) {
	var env Envelope
	switch e := v.(type) {
	case Envelope:
		env = e
	case *Envelope:
		if e == nil {
			return append(b, "null"...), nil
		}
		env = *e
	default:
		m, err := marshalPlain(v)
		if err != nil {
			return nil, err
		}
		return append(b, m...), nil
	}
	out := env.Output
	env.Output = ""
	m, err := env.MarshalJSON()
	if err != nil {
		return nil, err
	}
	head, ok := bytes.CutSuffix(m, []byte(outputTail))
	if !ok {
		return nil, fmt.Errorf("mcp: envelope JSON does not end with its output: %.40q", m[max(len(m)-40, 0):])
	}
	b = append(b, head...)
	b = append(b, `"output":`...)
	b = prior.appendString(b, out)
	return append(b, '}'), nil
}

const hexDigits = "0123456789abcdef"

// plainByte marks the ASCII bytes a JSON string carries unescaped.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string exactly as a json.Encoder with
// SetEscapeHTML(false) writes it: <, > and & as they are, U+2028 and U+2029
// escaped, invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// toolsCache holds the encoded tools array of each catalog a profile sees,
// keyed by the catalog's tool names; a change of the registry empties it.
type toolsCache struct {
	mu sync.Mutex // guards m
	m  map[string]json.RawMessage
}

func (c *toolsCache) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// encoded returns the JSON array of tools, encoding it on first use.
func (c *toolsCache) encoded(tools []Tool) (json.RawMessage, error) {
	var key strings.Builder
	for _, t := range tools {
		key.WriteString(t.Name)
		key.WriteByte(0)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.m[key.String()]; ok {
		return b, nil
	}
	b, err := marshalPlain(tools)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = make(map[string]json.RawMessage)
	}
	c.m[key.String()] = b
	return b, nil
}

// listToolsWire answers tools/list from the cached tools array.
type listToolsWire struct {
	*ListToolsResult
	tools json.RawMessage
}

func (w *listToolsWire) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	b, err := appendHeader(b, &w.ResultHeader)
	if err != nil {
		return nil, err
	}
	if w.TTLMs != nil {
		b = fmt.Appendf(b, `"ttlMs":%d,`, *w.TTLMs)
	}
	if w.CacheScope != "" {
		b = append(b, `"cacheScope":`...)
		b = appendString(b, w.CacheScope)
		b = append(b, ',')
	}
	b = append(b, `"tools":`...)
	b = append(b, w.tools...)
	return append(b, '}'), nil
}
