package tools

import (
	"errors"
	"slices"
	"testing"
)

// FuzzBashInput feeds arbitrary argument objects to BashCommand's input
// decoding. Properties: no panic; a decoded action always has a known type;
// every failure is an *InputError (a structured invalid_input answer).
func FuzzBashInput(f *testing.F) {
	for _, s := range []string{
		`{"action_json":{"type":"command","command":"ls"},"thread_id":"t","workspace_root":"/w"}`,
		`{"action_json":"echo hi","wait_for_seconds":1}`,
		`{"action_json":"{\"send_text\":\"x\",\"submit\":true}"}`,
		`{"action_json":{"lines":3,"diff":true},"wait_policy":"return_early"}`,
		`{"command":"x","action_json":null}`,
		`{"action_json":{"send_ascii":[1,2,300]}}`,
		`{"action_json":[],"wait_for_seconds":-1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in bashInput
		if err := decodeArguments(raw, &in); err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("decodeArguments error %v is not an InputError", err)
			}
			return
		}
		a, err := in.action()
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("action error %v is not an InputError", err)
			}
			return
		}
		if !slices.Contains(actionTypeNames(), a.Type) {
			t.Fatalf("action type %q accepted", a.Type)
		}
		if _, err := in.wait(); err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("wait error %v is not an InputError", err)
			}
		}
	})
}
