package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"winx/jsonrpc"
)

// Custom headers from tool parameters (2026-07-28 Streamable HTTP, SEP-2243):
// a property of a tool's input schema annotated with "x-mcp-header": "Name"
// is mirrored by clients into an Mcp-Param-Name header, and a server that
// reads the body must reject a call whose headers do not match it (400,
// -32020), so that intermediaries routing on the header cannot be fooled.

// headerParam is one argument mirrored into a header.
type headerParam struct {
	name string   // the annotation's value: the header is "Mcp-Param-" + name
	path []string // the chain of properties keys from the schema root
}

// maxHeaderParamDepth bounds the properties chain followed in a schema.
const maxHeaderParamDepth = 32

// schemaNode is the part of a JSON Schema the annotation rules look at.
type schemaNode struct {
	Type       json.RawMessage            `json:"type"`
	Header     json.RawMessage            `json:"x-mcp-header"`
	Properties map[string]json.RawMessage `json:"properties"`
}

// headerParams finds the x-mcp-header annotations of an input schema and
// checks the rules the revision puts on them: a non-empty HTTP token, unique
// regardless of case, on a string, integer or boolean property. Only
// properties chains are followed, the one place an annotation is valid.
func headerParams(schema json.RawMessage) ([]headerParam, error) {
	var out []headerParam
	seen := map[string]bool{}
	var walk func(node json.RawMessage, path []string) error
	walk = func(node json.RawMessage, path []string) error {
		if len(path) > maxHeaderParamDepth {
			return fmt.Errorf("properties nested deeper than %d", maxHeaderParamDepth)
		}
		var n schemaNode
		if json.Unmarshal(node, &n) != nil {
			return nil // booleans and other non-object schemas carry no annotation
		}
		if n.Header != nil {
			if len(path) == 0 {
				return errors.New("x-mcp-header on the schema root")
			}
			var name, typ string
			if json.Unmarshal(n.Header, &name) != nil || !isToken(name) {
				return fmt.Errorf("x-mcp-header of %q must be a non-empty HTTP token", strings.Join(path, "."))
			}
			if json.Unmarshal(n.Type, &typ) != nil || (typ != "string" && typ != "integer" && typ != "boolean") {
				return fmt.Errorf("x-mcp-header %q is on a property that is not a string, integer or boolean", name)
			}
			if seen[strings.ToLower(name)] {
				return fmt.Errorf("x-mcp-header %q is used twice", name)
			}
			seen[strings.ToLower(name)] = true
			out = append(out, headerParam{name: name, path: append([]string(nil), path...)})
		}
		for _, k := range slices.Sorted(maps.Keys(n.Properties)) {
			if err := walk(n.Properties[k], append(path, k)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(schema, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// checkParamHeaders enforces the Mcp-Param-* headers of a 2026-07-28
// tools/call. An unknown tool is left for dispatch to report.
func (h *HTTPHandler) checkParamHeaders(r *http.Request, caller Caller, req *jsonrpc.Request) *jsonrpc.Error {
	if req.Method != "tools/call" {
		return nil
	}
	// The name first, without scanning the arguments: only a tool with
	// annotated parameters needs them decoded.
	rawName, err := memberFold(req.Params, "name")
	var name string
	if err != nil || json.Unmarshal(rawName, &name) != nil {
		return nil
	}
	rt, ok := h.server.registry.lookupTool(caller.Profile, name)
	if !ok || len(rt.headers) == 0 {
		return nil
	}
	var p callToolParams
	if json.Unmarshal(req.Params, &p) != nil {
		return nil
	}
	return matchParamHeaders(r.Header, rt.headers, p.Arguments)
}

// matchParamHeaders checks that each annotated argument present and
// non-null in args has its header, and that the header, decoded, equals it.
func matchParamHeaders(hdr http.Header, params []headerParam, args json.RawMessage) *jsonrpc.Error {
	var root any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		return nil // not an object: dispatch reports the bad arguments
	}
	for _, hp := range params {
		value, ok := lookupPath(root, hp.path)
		if !ok || value == nil {
			continue
		}
		field := "Mcp-Param-" + hp.name
		values := hdr.Values(field)
		if len(values) == 0 {
			return headerMismatch("missing " + field + " header")
		}
		if len(values) > 1 {
			return headerMismatch(field + " header given more than once")
		}
		got, ok := decodeHeaderValue(values[0])
		if !ok || !plainHeaderValue(values[0]) {
			return headerMismatch(field + " header is not validly encoded")
		}
		if !headerEquals(got, value) {
			return headerMismatch(field + " header does not match the argument")
		}
	}
	return nil
}

func lookupPath(v any, path []string) (any, bool) {
	for _, k := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// plainHeaderValue reports whether v holds only the characters a header
// value may carry unencoded: visible ASCII, space and tab.
func plainHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// headerEquals compares a decoded header with the argument it mirrors:
// strings exactly, booleans as "true"/"false", numbers numerically (so
// 42.0 matches 42, as the revision recommends).
func headerEquals(header string, value any) bool {
	switch v := value.(type) {
	case string:
		return header == v
	case bool:
		return header == strconv.FormatBool(v)
	case json.Number:
		// The same text is the same number, even where big.Rat refuses
		// it (an exponent beyond its range).
		if header == v.String() {
			return true
		}
		// A JSON text that starts like a number is one; big.Rat alone
		// would also take fractions and hex.
		if header == "" || (header[0] != '-' && (header[0] < '0' || header[0] > '9')) || !json.Valid([]byte(header)) {
			return false
		}
		want, ok1 := new(big.Rat).SetString(v.String())
		got, ok2 := new(big.Rat).SetString(header)
		return ok1 && ok2 && want.Cmp(got) == 0
	}
	return false // objects and arrays cannot be mirrored
}
