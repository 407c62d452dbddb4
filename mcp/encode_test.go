package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The hand-written answer encoding gives the bytes encoding/json gives
// with SetEscapeHTML(false), and never escapes <, > or &.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	texts := []string{
		"", "hi", "line 1\nline 2\ttab\r\n", `quote " backslash \ slash /`,
		"<html> & </html>", "\x00\x01\x1f\x7f", "caf\u00e9 \u2028 \u2029 \U0001F600",
		"bad \xff utf-8 \xc3", strings.Repeat("x", 5000) + "\n<&>",
	}
	ttl := int64(300000)
	for _, text := range texts {
		env := Envelope{Status: "completed", Tool: "ReadFiles", Message: text, Data: map[string]any{"k": text, "output": ""}, Output: text}
		results := []result{
			&callToolWire{CallToolResult: &CallToolResult{Content: []Content{&TextContent{Text: text}}, StructuredContent: env}},
			&callToolWire{ResultHeader: ResultHeader{ResultType: ResultComplete, Meta: map[string]any{"a": text}},
				CallToolResult: &CallToolResult{Content: []Content{&TextContent{Text: text}, &TextContent{Text: text, Annotations: &Annotations{Audience: []string{"user"}}}, &ImageContent{Data: "AAAA", MIMEType: "image/png"}},
					StructuredContent: &env, IsError: true}},
			// The output is copied from the text block only when it is the same text.
			&callToolWire{CallToolResult: &CallToolResult{Content: []Content{&TextContent{Text: text}}, StructuredContent: Envelope{Status: "completed", Tool: "ReadFiles", Output: text + "\n<more>"}}},
			&callToolWire{CallToolResult: &CallToolResult{Content: []Content{&TextContent{Text: text + "x"}, &TextContent{Text: text}}, StructuredContent: env}},
			&callToolWire{CallToolResult: &CallToolResult{Content: []Content{&ImageContent{Data: "AAAA", MIMEType: "image/png"}, &TextContent{Text: text}}, StructuredContent: &env}},
			&callToolWire{CallToolResult: &CallToolResult{Content: []Content{}, StructuredContent: map[string]string{"x": text}}},
			&callToolWire{CallToolResult: &CallToolResult{}},
		}
		for i, r := range results {
			want, err := encodeNoHTMLEscape(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalResult(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("result %d of %q:\n got %s\nwant %s", i, text, got, want)
			}
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if bytes.Contains(got, []byte(esc)) {
					t.Errorf("result %d of %q has %s: %s", i, text, esc, got)
				}
			}
		}
	}
	tools := []Tool{{Name: "a", Description: "<b> & c"}, {Name: "b", Description: "two\nlines"}}
	var cache toolsCache
	for range 2 {
		enc, err := cache.encoded(tools)
		if err != nil {
			t.Fatal(err)
		}
		lt := &ListToolsResult{ResultHeader: ResultHeader{ResultType: ResultComplete, Meta: map[string]any{"x": 1}}, CacheHint: CacheHint{TTLMs: &ttl, CacheScope: CacheScopePublic}, Tools: tools}
		want, _ := encodeNoHTMLEscape(lt)
		got, err := marshalResult(&listToolsWire{ListToolsResult: lt, tools: enc})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("tools/list:\n got %s, %v\nwant %s", got, err, want)
		}
	}
}

// encodeNoHTMLEscape is the reference: encoding/json's Encoder with HTML
// escaping off, without its trailing newline.
func encodeNoHTMLEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// BenchmarkEncodeToolResult encodes the answer of a 2,000-line read (text
// and its structured copy) with encoding/json and with the answer path.
//
//	go test ./mcp -run='^$' -bench=EncodeToolResult -benchmem
func BenchmarkEncodeToolResult(b *testing.B) {
	var sb strings.Builder
	for i := range 2000 {
		sb.WriteString("  ")
		sb.WriteString(strings.Repeat("x", i%40))
		sb.WriteString("\t// a <typical> line & \"code\"\n")
	}
	text := sb.String()
	res := &callToolWire{CallToolResult: &CallToolResult{Content: []Content{&TextContent{Text: text}},
		StructuredContent: Envelope{Status: "completed", Tool: "ReadFiles", Output: text}}}
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := json.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("answer-path", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := marshalResult(res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
