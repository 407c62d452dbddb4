package mcp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzHeaderValues covers the parsers of routing and parameter headers:
// =?base64?...?= decoding, x-mcp-header schema scanning and value matching.
// Properties: no panic; a decoded wrapped value re-encodes to its input; an
// unwrapped value decodes to itself; a value always matches its own text.
func FuzzHeaderValues(f *testing.F) {
	f.Add("=?base64?SGVsbG8=?=", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`, "42")
	f.Add("=?base64?SGVsbG8?=", `{"properties":{"a":{"properties":{"b":{"x-mcp-header":"B"}}}}}`, "1e3")
	f.Add("plain", `{"type":"object"}`, "-0.5")
	f.Add("=?base64??=", `[]`, "1e999999")
	f.Fuzz(func(t *testing.T, header, schema, number string) {
		got, ok := decodeHeaderValue(header)
		wrapped := strings.HasPrefix(header, "=?base64?") && strings.HasSuffix(header, "?=") && len(header) >= len("=?base64??=")
		switch {
		case !wrapped && (!ok || got != header):
			t.Fatalf("decodeHeaderValue(%q) = %q, %v; want the value unchanged", header, got, ok)
		case wrapped && ok:
			inner := header[len("=?base64?") : len(header)-2]
			if base64.StdEncoding.EncodeToString([]byte(got)) != inner {
				t.Fatalf("decodeHeaderValue(%q) = %q does not re-encode to %q", header, got, inner)
			}
		}
		_, _ = headerParams(json.RawMessage(schema))
		if len(number) <= 64 && json.Valid([]byte(number)) && !strings.ContainsAny(number, "\"{[tfn \t\r\n") {
			if !headerEquals(number, json.Number(number)) {
				t.Fatalf("headerEquals(%q, %q) = false, want true", number, number)
			}
		}
		headerEquals(header, json.Number(number))
	})
}
