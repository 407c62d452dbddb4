package mcp

import (
	"encoding/json"
	"testing"
)

// TestInputRequestAlwaysHasParams: strict clients (the official Go SDK)
// decode the params of every request they are asked to answer; a roots/list
// request without params failed them with "unexpected end of JSON input".
func TestInputRequestAlwaysHasParams(t *testing.T) {
	for _, req := range []InputRequest{
		{Method: "roots/list"},
		{Method: "roots/list", Params: json.RawMessage("null")},
		{Method: "roots/list", Params: json.RawMessage{}},
	} {
		b, err := json.Marshal(map[string]InputRequest{"roots": req})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), `{"roots":{"method":"roots/list","params":{}}}`; got != want {
			t.Errorf("marshal = %s, want %s", got, want)
		}
	}
	b, _ := json.Marshal(InputRequest{Method: "elicitation/create", Params: map[string]any{"message": "m"}})
	if got, want := string(b), `{"method":"elicitation/create","params":{"message":"m"}}`; got != want {
		t.Errorf("marshal = %s, want %s", got, want)
	}
}
