// Package jsonrpc implements JSON-RPC 2.0 messages, their IDs and wire errors,
// two framers (newline-delimited for stdio, 4-byte big-endian length prefixes for
// the daemon wire) and a connection that tracks in-flight requests in both
// directions. It knows nothing of MCP; methods and params are opaque here.
//
// Spec: https://www.jsonrpc.org/specification. Deliberate deviations:
//   - Batches are rejected with InvalidRequest, because MCP forbids them.
//   - A null id is accepted only on error responses (the spec's answer to a
//     request whose id could not be read); requests with id null are invalid.
//   - Fractional and exponent-form numeric IDs are rejected: the spec says
//     numbers SHOULD NOT contain fractional parts, and they cannot be kept exactly
//     by every peer.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is the only protocol version this package speaks.
const Version = "2.0"

// MaxIDLength bounds the textual size of an ID so a hostile peer cannot make the
// in-flight table hold megabyte keys.
const MaxIDLength = 256

// ID is a request identifier, a JSON string or integer. The original JSON text
// is kept byte for byte so a response echoes exactly what the peer sent
// (1 and 1.0 and "1" are three different IDs on the wire).
// The zero ID means "absent": the message is a notification.
type ID struct {
	raw string // canonical JSON text of the id; "" when absent
}

// StringID returns an ID holding the JSON string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // a Go string always marshals
	return ID{raw: string(b)}
}

// Int64ID returns an ID holding the integer n.
func Int64ID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsValid reports whether the ID is present.
func (id ID) IsValid() bool { return id.raw != "" }

// String returns the ID's JSON text, or "null" when absent.
func (id ID) String() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// MarshalJSON writes the ID's original text, or null when absent.
func (id ID) MarshalJSON() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalJSON accepts a JSON string or an integer and keeps its exact text.
func (id *ID) UnmarshalJSON(data []byte) error {
	parsed, err := parseID(data)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// ErrInvalidID reports an id that is neither a string nor an integer.
var ErrInvalidID = errors.New("jsonrpc: id must be a string or an integer")

func parseID(data []byte) (ID, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return ID{}, nil
	}
	if len(data) > MaxIDLength {
		return ID{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalidID, MaxIDLength)
	}
	switch data[0] {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return ID{}, ErrInvalidID
		}
		return ID{raw: string(data)}, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if err := json.Unmarshal(data, &n); err != nil {
			return ID{}, ErrInvalidID
		}
		if bytes.ContainsAny(data, ".eE") {
			return ID{}, fmt.Errorf("%w: fractional number", ErrInvalidID)
		}
		return ID{raw: string(data)}, nil
	}
	return ID{}, ErrInvalidID
}

// Message is a Request (call or notification) or a Response.
type Message interface {
	isMessage()
}

// Request is a call when ID is valid and a notification when it is not.
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage // nil when absent; otherwise an object or array
}

// IsCall reports whether the request expects a response.
func (r *Request) IsCall() bool { return r.ID.IsValid() }

// Response answers a call: exactly one of Result and Error is set.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error
	// Encoded says Result came from a JSON encoder, so it is valid by
	// construction and EncodeMessage does not scan it again (a large
	// answer is otherwise read once more just to be checked).
	Encoded bool
}

func (*Request) isMessage()  {}
func (*Response) isMessage() {}

// wireMessage is the union of every field a message may carry. Presence is
// decided from the raw fields, so `"result": null` still counts as a result.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// DecodeError explains why bytes were not a message. ID is set when the id
// could be read, so the answer can still reach the right caller.
type DecodeError struct {
	ID  ID
	Err *Error
}

func (e *DecodeError) Error() string { return e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// DecodeMessage parses one JSON-RPC message. Failures are *DecodeError carrying
// the wire error to send back: ParseError for bad JSON, InvalidRequest for a
// batch or a message of the wrong shape.
func DecodeMessage(data []byte) (Message, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(data) {
			return nil, &DecodeError{Err: NewError(CodeParseError, "parse error")}
		}
		return nil, &DecodeError{Err: NewError(CodeInvalidRequest, "batches are not supported")}
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if json.Valid(data) {
			return nil, &DecodeError{Err: NewError(CodeInvalidRequest, "message must be a JSON object")}
		}
		return nil, &DecodeError{Err: NewError(CodeParseError, "parse error")}
	}
	// One validating scan of the whole message; the members are then
	// found without scanning their values again, and only the small ones
	// are decoded (json.Unmarshal of the whole would scan it twice and
	// copy params through the decoder).
	if !json.Valid(data) {
		return nil, &DecodeError{Err: NewError(CodeParseError, "parse error")}
	}
	w, err := decodeWire(data)
	if err != nil {
		return nil, &DecodeError{ID: bestEffortID(w.ID), Err: NewError(CodeInvalidRequest, "invalid message: "+err.Error())}
	}
	id, idErr := parseID(w.ID)
	if idErr != nil {
		return nil, &DecodeError{Err: NewError(CodeInvalidRequest, idErr.Error())}
	}
	if w.JSONRPC != Version {
		return nil, &DecodeError{ID: id, Err: NewError(CodeInvalidRequest, `jsonrpc must be "2.0"`)}
	}
	hasID := len(w.ID) > 0
	switch {
	case w.Method != "":
		if w.Result != nil || w.Error != nil {
			return nil, &DecodeError{ID: id, Err: NewError(CodeInvalidRequest, "a request cannot carry result or error")}
		}
		if hasID && !id.IsValid() {
			return nil, &DecodeError{Err: NewError(CodeInvalidRequest, "request id must not be null")}
		}
		if p := bytes.TrimSpace(w.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' {
			return nil, &DecodeError{ID: id, Err: NewError(CodeInvalidRequest, "params must be an object or an array")}
		}
		return &Request{ID: id, Method: w.Method, Params: w.Params}, nil
	case w.Result != nil || w.Error != nil:
		if (w.Result != nil) == (w.Error != nil) {
			return nil, &DecodeError{ID: id, Err: NewError(CodeInvalidRequest, "a response carries exactly one of result and error")}
		}
		if !hasID {
			return nil, &DecodeError{Err: NewError(CodeInvalidRequest, "a response must carry an id")}
		}
		if w.Result != nil && !id.IsValid() {
			return nil, &DecodeError{Err: NewError(CodeInvalidRequest, "only an error response may have id null")}
		}
		return &Response{ID: id, Result: w.Result, Error: w.Error}, nil
	}
	return nil, &DecodeError{ID: id, Err: NewError(CodeInvalidRequest, "message has neither method nor result nor error")}
}

// wireFields are wireMessage's members, in the order of its fields.
var wireFields = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// decodeWire reads the valid JSON object data into a wireMessage the way
// json.Unmarshal would (a member name matches its field exactly, else
// case-insensitively; the last of repeated members wins), decoding only
// the small members and copying the raw ones once.
func decodeWire(data []byte) (wireMessage, error) {
	var raw [len(wireFields)][]byte
	Members(data, func(name string, v []byte) bool {
		for i, f := range wireFields {
			if name == f {
				raw[i] = v
				return true
			}
		}
		for i, f := range wireFields {
			if strings.EqualFold(name, f) {
				raw[i] = v
				return true
			}
		}
		return true
	})
	var w wireMessage
	own := func(b []byte) json.RawMessage {
		if b == nil {
			return nil
		}
		return append(json.RawMessage(nil), b...)
	}
	w.ID, w.Params, w.Result = own(raw[1]), own(raw[3]), own(raw[4])
	var first error
	for _, m := range []struct {
		raw []byte
		dst any
	}{{raw[0], &w.JSONRPC}, {raw[2], &w.Method}, {raw[5], &w.Error}} {
		if m.raw == nil {
			continue
		}
		if err := json.Unmarshal(m.raw, m.dst); err != nil && first == nil {
			first = err
		}
	}
	return w, first
}

func bestEffortID(raw json.RawMessage) ID {
	id, err := parseID(raw)
	if err != nil {
		return ID{}
	}
	return id
}

// EncodeMessage serializes a message without a trailing newline. IDs and raw
// members are written as they are, without encoding/json's HTML escaping, so a
// response echoes the request's id byte for byte.
func EncodeMessage(m Message) ([]byte, error) {
	w := wireMessage{JSONRPC: Version}
	switch m := m.(type) {
	case *Request:
		if m.Method == "" {
			return nil, errors.New("jsonrpc: request without method")
		}
		w.Method = m.Method
		w.Params = m.Params
		if m.ID.IsValid() {
			w.ID = json.RawMessage(m.ID.raw)
		}
	case *Response:
		if m.Error == nil {
			if m.Result != nil && !m.Encoded && !json.Valid(m.Result) {
				return nil, errors.New("jsonrpc: response result is not valid JSON")
			}
			return encodeResult(m.ID, m.Result), nil
		}
		w.ID = json.RawMessage(m.ID.String())
		w.Error = m.Error
	default:
		return nil, fmt.Errorf("jsonrpc: cannot encode %T", m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// EncodeMessageParts is EncodeMessage in parts: written one after the other
// they are exactly EncodeMessage's bytes. A success response's result is one
// of the parts as it is, so a large answer is written without being copied
// into a second buffer; every other message is a single part.
func EncodeMessageParts(m Message) ([][]byte, error) {
	if r, ok := m.(*Response); ok && r.Error == nil {
		if r.Result != nil && !r.Encoded && !json.Valid(r.Result) {
			return nil, errors.New("jsonrpc: response result is not valid JSON")
		}
		result := r.Result
		if result == nil {
			result = json.RawMessage("{}")
		}
		return [][]byte{appendResultHead(nil, r.ID), result, []byte("}")}, nil
	}
	b, err := EncodeMessage(m)
	if err != nil {
		return nil, err
	}
	return [][]byte{b}, nil
}

// appendResultHead appends a success response's members before its result.
func appendResultHead(b []byte, id ID) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.String()...)
	return append(b, `,"result":`...)
}

// encodeResult writes a success response around its result without passing
// the result through encoding/json again: results are large (file contents,
// command output) and re-compacting them costs more than checking them.
// The caller has checked that result is valid JSON; nil means an empty
// object. Surrounding whitespace of the result is kept as is.
func encodeResult(id ID, result json.RawMessage) []byte {
	if result == nil {
		result = json.RawMessage("{}")
	}
	idText := id.String()
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(idText)+len(result))
	b = appendResultHead(b, id)
	b = append(b, result...)
	return append(b, '}')
}

// NewCall builds a call with params marshalled to JSON. Nil, or a value that
// marshals to null, means no params; anything else must marshal to a JSON
// object or array, as the spec requires.
func NewCall(id ID, method string, params any) (*Request, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Request{ID: id, Method: method, Params: raw}, nil
}

// NewNotification builds a notification with params as in NewCall.
func NewNotification(method string, params any) (*Request, error) {
	return NewCall(ID{}, method, params)
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	raw, ok := params.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: marshal params: %w", err)
		}
		raw = b
	}
	switch p := bytes.TrimSpace(raw); {
	case len(p) == 0 || bytes.Equal(p, []byte("null")):
		return nil, nil
	case p[0] != '{' && p[0] != '[':
		return nil, fmt.Errorf("jsonrpc: params must be a JSON object or array, got %.20s", p)
	}
	return raw, nil
}
