package jsonrpc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	tests := []struct {
		name string
		obj  string
		want map[string]string
	}{
		{"empty", `{}`, map[string]string{}},
		{"scalars", ` { "a" : 1 , "b":true,"c":null, "d":-1.5e3 } `, map[string]string{"a": "1", "b": "true", "c": "null", "d": "-1.5e3"}},
		{"nested", `{"a":{"x":[1,{"y":"}"}]},"b":[],"c":"q\"}"}`, map[string]string{"a": `{"x":[1,{"y":"}"}]}`, "b": "[]", "c": `"q\"}"`}},
		{"backslashes", `{"a":"\\","b":"x\\\""}`, map[string]string{"a": `"\\"`, "b": `"x\\\""`}},
		{"escaped name", `{"\u0061b":2}`, map[string]string{"ab": "2"}},
		{"last wins", `{"a":1,"a":2}`, map[string]string{"a": "2"}},
	}
	for _, tt := range tests {
		got := map[string]string{}
		err := Members([]byte(tt.obj), func(n string, v []byte) bool { got[n] = string(v); return true })
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Members(%s) = %v, %v; want %v", tt.name, tt.obj, got, err, tt.want)
		}
		// The same as encoding/json's reading into a map.
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(tt.obj), &m) != nil {
			t.Fatalf("%s: not valid JSON", tt.name)
		}
		for k, v := range m {
			if got[k] != string(v) {
				t.Errorf("%s: member %q = %s, encoding/json says %s", tt.name, k, got[k], v)
			}
		}
	}
	for _, bad := range []string{``, `[]`, `{"a"}`, `{"a":"x`, `{"a":[1}`, `{"a":1`} {
		if err := Members([]byte(bad), func(string, []byte) bool { return true }); err == nil {
			t.Errorf("Members(%q) = nil error, want ErrNotObject", bad)
		}
	}
	if v := Member([]byte(`{"a":{"b":1},"c":"`+strings.Repeat("x", 100)+`"}`), "a"); string(v) != `{"b":1}` {
		t.Errorf("Member a = %s", v)
	}
}

// FuzzMembers checks Members against encoding/json on every valid object:
// the same members, each with the same value bytes.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"d":"\\\""}`, `{"\u00e9":null, "x" : { } }`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		got := map[string]string{}
		if err := Members(data, func(n string, v []byte) bool { got[n] = string(v); return true }); err != nil {
			t.Fatalf("Members(%q) = %v on a valid object", data, err)
		}
		for k, v := range m {
			if got[k] != string(v) {
				t.Fatalf("Members(%q): %q = %q, encoding/json says %q", data, k, got[k], v)
			}
		}
		if len(got) != len(m) {
			t.Fatalf("Members(%q) found %d names, encoding/json %d", data, len(got), len(m))
		}
	})
}
