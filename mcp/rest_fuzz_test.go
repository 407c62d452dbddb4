package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeRESTCall: any body either is refused with a reason or gives a
// named call whose arguments are one JSON object.
func FuzzDecodeRESTCall(f *testing.F) {
	for _, seed := range []string{
		`{"name":"Alpha"}`, `{"name":"Alpha","arguments":{"x":[1,2]}}`, `{"name":"Alpha","arguments":null}`,
		`{"name":""}`, `{"name":1}`, `{"name":"A","task":{}}`, `{"name":"A"} {}`, `[1]`, `null`, ``,
		`{"name":"A","arguments":"s"}`, `{"name":"A","arguments": {}}`, "{\"name\":\"A\"}\n\t ",
		`{"Name":"A"}`, `{"name":"A","name":"B"}`, `{"name":"A","arguments":{"x":1,"x":2}}`, `{"name":"A","arguments":{"a":[{"b":1,"b":2}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, bad := decodeRESTCall(body)
		if bad != nil {
			return
		}
		if in.Name == "" {
			t.Fatalf("decodeRESTCall(%q) accepted an empty name", body)
		}
		var args map[string]json.RawMessage
		if err := json.Unmarshal(in.Arguments, &args); err != nil || args == nil {
			t.Fatalf("decodeRESTCall(%q) arguments %q are not an object: %v", body, in.Arguments, err)
		}
		// An accepted body spells its members exactly.
		var top map[string]json.RawMessage
		json.Unmarshal(body, &top)
		for k := range top {
			if k != "name" && k != "arguments" {
				t.Fatalf("decodeRESTCall(%q) accepted member %q", body, k)
			}
		}
	})
}
