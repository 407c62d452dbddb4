package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// rawID builds an ID from its exact JSON text, as DecodeMessage would.
func rawID(text string) ID { return ID{raw: text} }

// longStringID is a JSON string id of exactly MaxIDLength bytes, quotes included.
var longStringID = `"` + strings.Repeat("a", MaxIDLength-2) + `"`

// decodeTests are messages DecodeMessage accepts. They also seed FuzzDecodeMessage.
var decodeTests = []struct {
	name string
	in   string
	want Message
}{
	{
		name: "call with object params",
		in:   `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`,
		want: &Request{ID: rawID("1"), Method: "tools/list", Params: json.RawMessage(`{"cursor":"c"}`)},
	},
	{
		name: "call with array params",
		in:   `{"jsonrpc":"2.0","id":2,"method":"sum","params":[1,2,3]}`,
		want: &Request{ID: rawID("2"), Method: "sum", Params: json.RawMessage(`[1,2,3]`)},
	},
	{
		name: "call without params",
		in:   `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		want: &Request{ID: rawID("3"), Method: "ping"},
	},
	{
		name: "string id that looks like a number",
		in:   `{"jsonrpc":"2.0","id":"1","method":"ping"}`,
		want: &Request{ID: rawID(`"1"`), Method: "ping"},
	},
	{
		name: "negative id",
		in:   `{"jsonrpc":"2.0","id":-5,"method":"ping"}`,
		want: &Request{ID: rawID("-5"), Method: "ping"},
	},
	{
		name: "zero id",
		in:   `{"jsonrpc":"2.0","id":0,"method":"ping"}`,
		want: &Request{ID: rawID("0"), Method: "ping"},
	},
	{
		name: "id above uint64",
		in:   `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
		want: &Request{ID: rawID("12345678901234567890"), Method: "ping"},
	},
	{
		name: "id below int64",
		in:   `{"jsonrpc":"2.0","id":-98765432109876543210,"method":"ping"}`,
		want: &Request{ID: rawID("-98765432109876543210"), Method: "ping"},
	},
	{
		name: "unicode string id",
		in:   `{"jsonrpc":"2.0","id":"héllo ☃ 世界","method":"ping"}`,
		want: &Request{ID: rawID(`"héllo ☃ 世界"`), Method: "ping"},
	},
	{
		name: "escaped string id kept as written",
		in:   `{"jsonrpc":"2.0","id":"\u0031\n","method":"ping"}`,
		want: &Request{ID: rawID(`"\u0031\n"`), Method: "ping"},
	},
	{
		name: "html characters in string id",
		in:   `{"jsonrpc":"2.0","id":"<a&b>","method":"ping"}`,
		want: &Request{ID: rawID(`"<a&b>"`), Method: "ping"},
	},
	{
		name: "empty string id",
		in:   `{"jsonrpc":"2.0","id":"","method":"ping"}`,
		want: &Request{ID: rawID(`""`), Method: "ping"},
	},
	{
		name: "id of exactly MaxIDLength",
		in:   `{"jsonrpc":"2.0","id":` + longStringID + `,"method":"ping"}`,
		want: &Request{ID: rawID(longStringID), Method: "ping"},
	},
	{
		name: "notification",
		in:   `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		want: &Request{Method: "notifications/initialized"},
	},
	{
		name: "notification with params",
		in:   `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"x"}}`,
		want: &Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":"a","reason":"x"}`)},
	},
	{
		name: "whitespace around and inside",
		in:   " \r\n\t{ \"jsonrpc\" : \"2.0\" , \"id\" : 7 , \"method\" : \"m\" , \"params\" : [ 1 , 2 ] }\n",
		want: &Request{ID: rawID("7"), Method: "m", Params: json.RawMessage(`[ 1 , 2 ]`)},
	},
	{
		name: "fields in any order",
		in:   `{"params":{},"method":"m","id":"x","jsonrpc":"2.0"}`,
		want: &Request{ID: rawID(`"x"`), Method: "m", Params: json.RawMessage(`{}`)},
	},
	{
		name: "unknown fields ignored",
		in:   `{"jsonrpc":"2.0","id":1,"method":"m","extra":{"a":[1]}}`,
		want: &Request{ID: rawID("1"), Method: "m"},
	},
	{
		name: "result response",
		in:   `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		want: &Response{ID: rawID("1"), Result: json.RawMessage(`{"tools":[]}`)},
	},
	{
		name: "null result counts as a result",
		in:   `{"jsonrpc":"2.0","id":"r","result":null}`,
		want: &Response{ID: rawID(`"r"`), Result: json.RawMessage(`null`)},
	},
	{
		name: "scalar result",
		in:   `{"jsonrpc":"2.0","id":12345678901234567890,"result":42}`,
		want: &Response{ID: rawID("12345678901234567890"), Result: json.RawMessage(`42`)},
	},
	{
		name: "error response",
		in:   `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found"}}`,
		want: &Response{ID: rawID("4"), Error: &Error{Code: CodeMethodNotFound, Message: "method not found"}},
	},
	{
		name: "error response with data",
		in:   `{"jsonrpc":"2.0","id":"e","error":{"code":-32602,"message":"bad","data":{"field":"x"}}}`,
		want: &Response{ID: rawID(`"e"`), Error: &Error{Code: CodeInvalidParams, Message: "bad", Data: json.RawMessage(`{"field":"x"}`)}},
	},
	{
		name: "error response with null id",
		in:   `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		want: &Response{Error: &Error{Code: CodeParseError, Message: "parse error"}},
	},
}

func TestDecodeMessage(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeMessage(%q) error = %v, want nil", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeMessage(%q) = %s, want %s", tt.in, describe(got), describe(tt.want))
			}
		})
	}
}

// decodeErrorTests are inputs DecodeMessage rejects, with the wire error code
// and the id (as ID.String) the error response should carry.
var decodeErrorTests = []struct {
	name string
	in   string
	code int64
	id   string
}{
	{"empty", "", CodeParseError, "null"},
	{"whitespace only", " \r\n\t", CodeParseError, "null"},
	{"not json", "hello", CodeParseError, "null"},
	{"truncated object", `{"jsonrpc":"2.0","id":1,"method":"m"`, CodeParseError, "null"},
	{"missing value", `{"jsonrpc":}`, CodeParseError, "null"},
	{"trailing garbage", `{"jsonrpc":"2.0","method":"m"} x`, CodeParseError, "null"},
	{"two objects", `{"jsonrpc":"2.0","method":"m"}{"jsonrpc":"2.0","method":"m"}`, CodeParseError, "null"},
	{"leading zero id", `{"jsonrpc":"2.0","id":01,"method":"m"}`, CodeParseError, "null"},
	{"invalid batch", `[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method"]`, CodeParseError, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, CodeInvalidRequest, "null"},
	{"empty batch", `[]`, CodeInvalidRequest, "null"},
	{"batch after whitespace", " \n[1]", CodeInvalidRequest, "null"},
	{"string", `"m"`, CodeInvalidRequest, "null"},
	{"number", `1`, CodeInvalidRequest, "null"},
	{"null", `null`, CodeInvalidRequest, "null"},
	{"true", `true`, CodeInvalidRequest, "null"},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, CodeInvalidRequest, "null"},
	{"integral fraction id", `{"jsonrpc":"2.0","id":1.0,"method":"m"}`, CodeInvalidRequest, "null"},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, CodeInvalidRequest, "null"},
	{"upper exponent id", `{"jsonrpc":"2.0","id":-1E-2,"method":"m"}`, CodeInvalidRequest, "null"},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"m"}`, CodeInvalidRequest, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"m"}`, CodeInvalidRequest, "null"},
	{"array id", `{"jsonrpc":"2.0","id":[],"method":"m"}`, CodeInvalidRequest, "null"},
	{"null id on a request", `{"jsonrpc":"2.0","id":null,"method":"m"}`, CodeInvalidRequest, "null"},
	{"string id over MaxIDLength", `{"jsonrpc":"2.0","id":"` + strings.Repeat("a", MaxIDLength-1) + `","method":"m"}`, CodeInvalidRequest, "null"},
	{"number id over MaxIDLength", `{"jsonrpc":"2.0","id":` + strings.Repeat("9", MaxIDLength+1) + `,"method":"m"}`, CodeInvalidRequest, "null"},
	{"missing version", `{"id":1,"method":"m"}`, CodeInvalidRequest, "1"},
	{"wrong version", `{"jsonrpc":"1.0","id":"v","method":"m"}`, CodeInvalidRequest, `"v"`},
	{"numeric version", `{"jsonrpc":2.0,"id":1,"method":"m"}`, CodeInvalidRequest, "1"},
	{"method not a string", `{"jsonrpc":"2.0","id":1,"method":1}`, CodeInvalidRequest, "1"},
	{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, "1"},
	{"neither method nor result nor error", `{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, "1"},
	{"empty object", `{}`, CodeInvalidRequest, "null"},
	{"string params", `{"jsonrpc":"2.0","id":2,"method":"m","params":"p"}`, CodeInvalidRequest, "2"},
	{"number params", `{"jsonrpc":"2.0","id":2,"method":"m","params":3}`, CodeInvalidRequest, "2"},
	{"bool params", `{"jsonrpc":"2.0","id":2,"method":"m","params":false}`, CodeInvalidRequest, "2"},
	{"null params", `{"jsonrpc":"2.0","id":2,"method":"m","params":null}`, CodeInvalidRequest, "2"},
	{"request with result", `{"jsonrpc":"2.0","id":3,"method":"m","result":1}`, CodeInvalidRequest, "3"},
	{"request with error", `{"jsonrpc":"2.0","id":3,"method":"m","error":{"code":1,"message":"x"}}`, CodeInvalidRequest, "3"},
	{"result and error", `{"jsonrpc":"2.0","id":4,"result":1,"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, "4"},
	{"result without id", `{"jsonrpc":"2.0","result":1}`, CodeInvalidRequest, "null"},
	{"error without id", `{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}`, CodeInvalidRequest, "null"},
	{"result with null id", `{"jsonrpc":"2.0","id":null,"result":1}`, CodeInvalidRequest, "null"},
	{"error not an object", `{"jsonrpc":"2.0","id":5,"error":"boom"}`, CodeInvalidRequest, "5"},
	{"fractional error code", `{"jsonrpc":"2.0","id":5,"error":{"code":1.5,"message":"x"}}`, CodeInvalidRequest, "5"},
}

func TestDecodeMessageErrors(t *testing.T) {
	for _, tt := range decodeErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeMessage([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeMessage(%q) = %s, want error", tt.in, describe(got))
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("DecodeMessage(%q) error = %T, want *DecodeError", tt.in, err)
			}
			if de.Err.Code != tt.code {
				t.Errorf("DecodeMessage(%q) code = %d (%v), want %d", tt.in, de.Err.Code, err, tt.code)
			}
			if de.ID.String() != tt.id {
				t.Errorf("DecodeMessage(%q) id = %s, want %s", tt.in, de.ID, tt.id)
			}
			var we *Error
			if !errors.As(err, &we) || we != de.Err {
				t.Errorf("errors.As(DecodeMessage(%q), *Error) = %v, want the DecodeError's Err", tt.in, we)
			}
		})
	}
}

// TestDecodeMessageIDsDistinct checks that IDs compare by their exact text:
// the string "1" and the number 1 are different requests.
func TestDecodeMessageIDsDistinct(t *testing.T) {
	ids := []string{`1`, `"1"`, `"\u0031"`, `-1`, `"-1"`, `12345678901234567890`, `12345678901234567891`}
	seen := make(map[ID]string)
	for _, text := range ids {
		in := `{"jsonrpc":"2.0","id":` + text + `,"method":"m"}`
		m, err := DecodeMessage([]byte(in))
		if err != nil {
			t.Fatalf("DecodeMessage(%q) error = %v, want nil", in, err)
		}
		id := m.(*Request).ID
		if id.String() != text {
			t.Errorf("DecodeMessage(%q) id = %s, want %s", in, id, text)
		}
		if prev, ok := seen[id]; ok {
			t.Errorf("id %s equals id %s, want distinct", text, prev)
		}
		seen[id] = text
	}
}

var encodeTests = []struct {
	name string
	msg  Message
	want string
}{
	{
		name: "call",
		msg:  &Request{ID: Int64ID(1), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)},
		want: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`,
	},
	{
		name: "call with string id",
		msg:  &Request{ID: StringID("abc"), Method: "ping"},
		want: `{"jsonrpc":"2.0","id":"abc","method":"ping"}`,
	},
	{
		name: "notification",
		msg:  &Request{Method: "notifications/initialized"},
		want: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	},
	{
		name: "params compacted",
		msg:  &Request{Method: "m", Params: json.RawMessage("[ 1,\n 2 ]")},
		want: `{"jsonrpc":"2.0","method":"m","params":[1,2]}`,
	},
	{
		name: "result",
		msg:  &Response{ID: Int64ID(-7), Result: json.RawMessage(`[1,2]`)},
		want: `{"jsonrpc":"2.0","id":-7,"result":[1,2]}`,
	},
	{
		name: "nil result becomes empty object",
		msg:  &Response{ID: Int64ID(2)},
		want: `{"jsonrpc":"2.0","id":2,"result":{}}`,
	},
	{
		name: "null result kept",
		msg:  &Response{ID: Int64ID(2), Result: json.RawMessage(`null`)},
		want: `{"jsonrpc":"2.0","id":2,"result":null}`,
	},
	{
		name: "error with data",
		msg:  &Response{ID: StringID("x"), Error: NewErrorWithData(CodeMethodNotFound, "method not found", map[string]string{"method": "y"})},
		want: `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"method not found","data":{"method":"y"}}}`,
	},
	{
		name: "error wins over result",
		msg:  &Response{ID: Int64ID(3), Result: json.RawMessage(`1`), Error: NewError(CodeInternalError, "internal error")},
		want: `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"internal error"}}`,
	},
	{
		name: "error with null id",
		msg:  &Response{Error: NewError(CodeParseError, "parse error")},
		want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
	},
	{
		name: "decoded html id echoed exactly",
		msg:  &Response{ID: rawID(`"<a&b>"`), Result: json.RawMessage(`"<ok>"`)},
		want: `{"jsonrpc":"2.0","id":"<a&b>","result":"<ok>"}`,
	},
	{
		name: "decoded escaped id echoed exactly",
		msg:  &Response{ID: rawID(`"\u0031"`), Result: json.RawMessage(`1`)},
		want: `{"jsonrpc":"2.0","id":"\u0031","result":1}`,
	},
	{
		name: "large id echoed exactly",
		msg:  &Response{ID: rawID(`12345678901234567890`), Result: json.RawMessage(`1`)},
		want: `{"jsonrpc":"2.0","id":12345678901234567890,"result":1}`,
	},
	{
		// encoding/json always escapes U+2028 in strings it writes; the id is
		// not re-escaped.
		name: "line separator in id kept",
		msg:  &Request{ID: rawID("\"a\u2028b\""), Method: "m\u2029"},
		want: "{\"jsonrpc\":\"2.0\",\"id\":\"a\u2028b\",\"method\":\"m\\u2029\"}",
	},
}

func TestEncodeMessage(t *testing.T) {
	for _, tt := range encodeTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeMessage(tt.msg)
			if err != nil {
				t.Fatalf("EncodeMessage(%s) error = %v, want nil", describe(tt.msg), err)
			}
			if string(got) != tt.want {
				t.Errorf("EncodeMessage(%s) = %s, want %s", describe(tt.msg), got, tt.want)
			}
		})
	}
}

func TestEncodeMessageErrors(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"nil message", nil},
		{"request without method", &Request{ID: Int64ID(1)}},
		{"notification without method", &Request{Params: json.RawMessage(`{}`)}},
		{"invalid params", &Request{Method: "m", Params: json.RawMessage(`{`)}},
		{"invalid result", &Response{ID: Int64ID(1), Result: json.RawMessage(`nope`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeMessage(tt.msg)
			if err == nil {
				t.Errorf("EncodeMessage(%s) = %s, want error", describe(tt.msg), got)
			}
		})
	}
}

// TestRoundTrip checks that encoding a decoded message keeps its meaning and
// that a second round changes nothing at all.
func TestRoundTrip(t *testing.T) {
	for _, tt := range decodeTests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := DecodeMessage([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeMessage(%q) error = %v, want nil", tt.in, err)
			}
			first, err := EncodeMessage(m)
			if err != nil {
				t.Fatalf("EncodeMessage(%s) error = %v, want nil", describe(m), err)
			}
			again, err := DecodeMessage(first)
			if err != nil {
				t.Fatalf("DecodeMessage(%q) error = %v, want nil", first, err)
			}
			if !sameMessage(again, m) {
				t.Errorf("DecodeMessage(EncodeMessage(m)) = %s, want %s", describe(again), describe(m))
			}
			second, err := EncodeMessage(again)
			if err != nil {
				t.Fatalf("EncodeMessage(%s) error = %v, want nil", describe(again), err)
			}
			if !bytes.Equal(second, first) {
				t.Errorf("second encoding = %s, want %s", second, first)
			}
		})
	}
}

func TestID(t *testing.T) {
	tests := []struct {
		name      string
		id        ID
		wantText  string
		wantValid bool
	}{
		{"zero", ID{}, "null", false},
		{"int", Int64ID(42), "42", true},
		{"negative int", Int64ID(-5), "-5", true},
		{"min int64", Int64ID(-1 << 63), "-9223372036854775808", true},
		{"string", StringID("abc"), `"abc"`, true},
		{"empty string", StringID(""), `""`, true},
		{"string with quote", StringID(`a"b`), `"a\"b"`, true},
		{"unicode string", StringID("☃"), `"☃"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.id.String(); got != tt.wantText {
				t.Errorf("String() = %s, want %s", got, tt.wantText)
			}
			if got := tt.id.IsValid(); got != tt.wantValid {
				t.Errorf("IsValid() = %v, want %v", got, tt.wantValid)
			}
			b, err := tt.id.MarshalJSON()
			if err != nil || string(b) != tt.wantText {
				t.Errorf("MarshalJSON() = %s, %v, want %s, nil", b, err, tt.wantText)
			}
			var back ID
			if err := json.Unmarshal([]byte(tt.wantText), &back); err != nil || back != tt.id {
				t.Errorf("json.Unmarshal(%s) = %s, %v, want %s, nil", tt.wantText, back, err, tt.id)
			}
		})
	}
}

func TestIDUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // ID.String() when valid
		wantErr bool
	}{
		{"integer", `7`, `7`, false},
		{"string", `"7"`, `"7"`, false},
		{"null is absent", `null`, `null`, false},
		{"surrounding space trimmed", " 8 ", `8`, false},
		{"huge integer", `123456789012345678901234567890`, `123456789012345678901234567890`, false},
		{"fraction", `1.5`, "", true},
		{"exponent", `1e3`, "", true},
		{"bool", `true`, "", true},
		{"object", `{}`, "", true},
		{"array", `[1]`, "", true},
		{"bad string", `"\x"`, "", true},
		{"bare minus", `-`, "", true},
		{"over MaxIDLength", strings.Repeat("1", MaxIDLength+1), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id ID
			err := id.UnmarshalJSON([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidID) {
					t.Errorf("UnmarshalJSON(%q) error = %v, want ErrInvalidID", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalJSON(%q) error = %v, want nil", tt.in, err)
			}
			if id.String() != tt.want {
				t.Errorf("UnmarshalJSON(%q) = %s, want %s", tt.in, id, tt.want)
			}
		})
	}
}

func TestNewCall(t *testing.T) {
	tests := []struct {
		name       string
		params     any
		wantParams string // "" means absent
		wantErr    bool
	}{
		{"no params", nil, "", false},
		{"raw params kept", json.RawMessage(`{ "a" : 1 }`), `{ "a" : 1 }`, false},
		{"struct params", struct {
			Name string `json:"name"`
		}{"x"}, `{"name":"x"}`, false},
		{"slice params", []int{1, 2}, `[1,2]`, false},
		{"nil pointer means no params", (*struct{ A int })(nil), "", false},
		{"raw null means no params", json.RawMessage(`null`), "", false},
		{"number params refused", 5, "", true},
		{"string params refused", "s", "", true},
		{"raw scalar params refused", json.RawMessage(` true`), "", true},
		{"unmarshalable params", make(chan int), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := NewCall(Int64ID(9), "m", tt.params)
			if tt.wantErr {
				if err == nil {
					t.Errorf("NewCall(%v) = %s, want error", tt.params, describe(req))
				}
				return
			}
			if err != nil {
				t.Fatalf("NewCall(%v) error = %v, want nil", tt.params, err)
			}
			if string(req.Params) != tt.wantParams || (tt.wantParams == "") != (req.Params == nil) {
				t.Errorf("NewCall(%v).Params = %q, want %q", tt.params, req.Params, tt.wantParams)
			}
			if !req.IsCall() || req.ID != Int64ID(9) || req.Method != "m" {
				t.Errorf("NewCall(9, m) = %s, want a call with id 9 and method m", describe(req))
			}
		})
	}

	n, err := NewNotification("note", []string{"a"})
	if err != nil {
		t.Fatalf("NewNotification error = %v, want nil", err)
	}
	if n.IsCall() || n.ID.IsValid() || string(n.Params) != `["a"]` {
		t.Errorf("NewNotification(note, [a]) = %s, want a notification with params [\"a\"]", describe(n))
	}
}

func TestAsWireError(t *testing.T) {
	wire := NewErrorWithData(CodeInvalidParams, "bad uri", map[string]int{"at": 3})
	tests := []struct {
		name string
		err  error
		want *Error
	}{
		{"wire error kept", wire, wire},
		{"wrapped wire error kept", fmt.Errorf("tools/call: %w", wire), wire},
		{"joined wire error kept", errors.Join(errors.New("other"), wire), wire},
		{"plain error hidden", errors.New("open /secret/path: denied"), NewError(CodeInternalError, "internal error")},
		{"sentinel hidden", ErrClosed, NewError(CodeInternalError, "internal error")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AsWireError(tt.err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("AsWireError(%v) = %+v, want %+v", tt.err, got, tt.want)
			}
		})
	}
}

func TestNewErrorWithData(t *testing.T) {
	tests := []struct {
		name     string
		data     any
		wantData string // "" means absent
	}{
		{"no data", nil, ""},
		{"map data", map[string]string{"k": "v"}, `{"k":"v"}`},
		{"string data", "text", `"text"`},
		{"unmarshalable data dropped", func() {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewErrorWithData(-1, "m", tt.data)
			if string(e.Data) != tt.wantData {
				t.Errorf("NewErrorWithData(%v).Data = %q, want %q", tt.data, e.Data, tt.wantData)
			}
			if e.Code != -1 || e.Message != "m" {
				t.Errorf("NewErrorWithData(-1, m) = %+v, want code -1 and message m", e)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{NewError(CodeMethodNotFound, "method not found"), "jsonrpc: code -32601: method not found"},
		{&FrameTooLargeError{Limit: 10}, "jsonrpc: frame too large (limit 10 bytes)"},
		{&DecodeError{Err: NewError(CodeParseError, "parse error")}, "jsonrpc: code -32700: parse error"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%T.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
	if !errors.Is(&FrameTooLargeError{Limit: 1}, ErrFrameTooLarge) {
		t.Errorf("errors.Is(*FrameTooLargeError, ErrFrameTooLarge) = false, want true")
	}
}

// sameMessage reports whether a and b are the same message: IDs, methods and
// error texts byte for byte, raw JSON members up to insignificant whitespace.
func sameMessage(a, b Message) bool {
	switch a := a.(type) {
	case *Request:
		b, ok := b.(*Request)
		return ok && a.ID == b.ID && a.Method == b.Method && sameJSON(a.Params, b.Params)
	case *Response:
		b, ok := b.(*Response)
		if !ok || a.ID != b.ID || !sameJSON(a.Result, b.Result) || (a.Error == nil) != (b.Error == nil) {
			return false
		}
		return a.Error == nil ||
			a.Error.Code == b.Error.Code && a.Error.Message == b.Error.Message && sameJSON(a.Error.Data, b.Error.Data)
	}
	return false
}

// sameJSON compares raw JSON up to whitespace; absent is not the same as present.
func sameJSON(a, b json.RawMessage) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// describe renders a message for failure output.
func describe(m Message) string {
	switch m := m.(type) {
	case *Request:
		if m == nil {
			return "(*Request)(nil)"
		}
		return fmt.Sprintf("Request{ID: %s, Method: %q, Params: %q}", m.ID, m.Method, m.Params)
	case *Response:
		if m == nil {
			return "(*Response)(nil)"
		}
		if m.Error != nil {
			return fmt.Sprintf("Response{ID: %s, Error: %+v (data %q)}", m.ID, *m.Error, m.Error.Data)
		}
		return fmt.Sprintf("Response{ID: %s, Result: %q}", m.ID, m.Result)
	}
	return fmt.Sprintf("%#v", m)
}

var benchRequest = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/home/user/project/jsonrpc/conn.go","offset":0,"limit":4096}}}`)

func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		if _, err := DecodeMessage(benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeResponse(b *testing.B) {
	resp := &Response{
		ID:     Int64ID(42),
		Result: json.RawMessage(`{"content":[{"type":"text","text":"package jsonrpc\n\nimport (\n\t\"context\"\n)\n"}],"isError":false}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeMessage(resp); err != nil {
			b.Fatal(err)
		}
	}
}
