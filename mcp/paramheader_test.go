package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestHeaderParams(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    []string // "Name=path.to.prop"
		wantErr string   // substring; "" means success
	}{
		{name: "none", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "flat", schema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`,
			want: []string{"N=n", "Region=region"}},
		{name: "nested properties", schema: `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}}`,
			want: []string{"B=a.b"}},
		{name: "not followed through items or anyOf", schema: `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}},"u":{"anyOf":[{"type":"string","x-mcp-header":"U"}]}}}`},
		{name: "boolean property schema", schema: `{"type":"object","properties":{"x":true}}`},
		{name: "root", schema: `{"type":"object","x-mcp-header":"Root"}`, wantErr: "root"},
		{name: "empty", schema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, wantErr: "token"},
		{name: "not a token", schema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`, wantErr: "token"},
		{name: "not a string", schema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`, wantErr: "token"},
		{name: "number type", schema: `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, wantErr: "not a string, integer or boolean"},
		{name: "object type", schema: `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, wantErr: "not a string, integer or boolean"},
		{name: "duplicate ignoring case", schema: `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`, wantErr: "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := headerParams(json.RawMessage(tt.schema))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("headerParams(%s) error = %v, want one containing %q", tt.schema, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("headerParams(%s) error = %v", tt.schema, err)
			}
			var names []string
			for _, hp := range got {
				names = append(names, hp.name+"="+strings.Join(hp.path, "."))
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Errorf("headerParams(%s) = %v, want %v", tt.schema, names, tt.want)
			}
		})
	}
}

func TestMatchParamHeaders(t *testing.T) {
	params, err := headerParams(json.RawMessage(`{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"count":{"type":"integer","x-mcp-header":"Count"},` +
		`"dry":{"type":"boolean","x-mcp-header":"Dry"},` +
		`"nested":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    string
		headers map[string][]string
		ok      bool
	}{
		{name: "no annotated arguments", args: `{"other":1}`, ok: true},
		{name: "null argument needs no header", args: `{"region":null}`, ok: true},
		{name: "plain match", args: `{"region":"us-west1"}`, headers: map[string][]string{"Mcp-Param-Region": {"us-west1"}}, ok: true},
		{name: "header name case", args: `{"region":"us-west1"}`, headers: map[string][]string{"MCP-PARAM-REGION": {"us-west1"}}, ok: true},
		{name: "missing header", args: `{"region":"us-west1"}`},
		{name: "mismatch", args: `{"region":"us-west1"}`, headers: map[string][]string{"Mcp-Param-Region": {"eu-west1"}}},
		{name: "values are case-sensitive", args: `{"region":"us-west1"}`, headers: map[string][]string{"Mcp-Param-Region": {"US-WEST1"}}},
		{name: "repeated header", args: `{"region":"a"}`, headers: map[string][]string{"Mcp-Param-Region": {"a", "a"}}},
		{name: "base64", args: `{"region":"Hello"}`, headers: map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8=?=" /* Hello */}}, ok: true},
		{name: "base64 of non-ASCII", args: `{"region":"Hello, 世界"}`, headers: map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8sIOS4lueVjA==?="}}, ok: true},
		{name: "base64 bad padding", args: `{"region":"Hello"}`, headers: map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8?="}}},
		{name: "base64 bad characters", args: `{"region":"Hello"}`, headers: map[string][]string{"Mcp-Param-Region": {"=?base64?SGVs!!!bG8=?="}}},
		{name: "unterminated sentinel is literal", args: `{"region":"=?base64?SGVsbG8="}`, headers: map[string][]string{"Mcp-Param-Region": {"=?base64?SGVsbG8="}}, ok: true},
		{name: "raw non-ASCII", args: `{"region":"é"}`, headers: map[string][]string{"Mcp-Param-Region": {"é"}}},
		{name: "integer", args: `{"count":42}`, headers: map[string][]string{"Mcp-Param-Count": {"42"}}, ok: true},
		{name: "integer compared numerically", args: `{"count":42}`, headers: map[string][]string{"Mcp-Param-Count": {"42.0"}}, ok: true},
		{name: "integer mismatch", args: `{"count":42}`, headers: map[string][]string{"Mcp-Param-Count": {"43"}}},
		{name: "hex is not a number here", args: `{"count":42}`, headers: map[string][]string{"Mcp-Param-Count": {"0x2A"}}},
		{name: "fraction is not a number here", args: `{"count":42}`, headers: map[string][]string{"Mcp-Param-Count": {"84/2"}}},
		{name: "boolean", args: `{"dry":false}`, headers: map[string][]string{"Mcp-Param-Dry": {"false"}}, ok: true},
		{name: "boolean spelling", args: `{"dry":true}`, headers: map[string][]string{"Mcp-Param-Dry": {"True"}}},
		{name: "nested", args: `{"nested":{"zone":"b"}}`, headers: map[string][]string{"Mcp-Param-Zone": {"b"}}, ok: true},
		{name: "nested missing", args: `{"nested":{"zone":"b"}}`},
		{name: "object where a primitive belongs", args: `{"region":{"a":1}}`, headers: map[string][]string{"Mcp-Param-Region": {`{"a":1}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := http.Header{}
			for k, vs := range tt.headers {
				for _, v := range vs {
					hdr.Add(k, v)
				}
			}
			err := matchParamHeaders(hdr, params, json.RawMessage(tt.args))
			if (err == nil) != tt.ok {
				t.Fatalf("matchParamHeaders(%v, %s) = %v, want ok=%v", tt.headers, tt.args, err, tt.ok)
			}
			if err != nil && err.Code != CodeHeaderMismatch {
				t.Errorf("matchParamHeaders(%v, %s) code = %d, want %d", tt.headers, tt.args, err.Code, CodeHeaderMismatch)
			}
		})
	}
}

func TestAddToolRejectsBadHeaderAnnotation(t *testing.T) {
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "x-mcp-header") {
			t.Errorf("AddTool with a number-typed x-mcp-header: panic %q, want one naming x-mcp-header", msg)
		}
	}()
	NewRegistry().AddTool(Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`)},
		func(context.Context, *ToolRequest) (*CallToolResult, error) { return TextResult("unreachable"), nil })
}
