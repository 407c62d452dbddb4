package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// An encoded result is sent as it is, with the bytes a checked one gets;
// an unchecked result that is not JSON is still refused.
func TestEncodedResult(t *testing.T) {
	res := json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	checked, err := EncodeMessage(&Response{ID: Int64ID(7), Result: res})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := EncodeMessage(&Response{ID: Int64ID(7), Result: res, Encoded: true})
	if err != nil || !bytes.Equal(encoded, checked) {
		t.Fatalf("encoded = %s, %v; want %s", encoded, err, checked)
	}
	if _, err := EncodeMessage(&Response{ID: Int64ID(7), Result: json.RawMessage(`{"a":`)}); err == nil {
		t.Fatal("an unchecked invalid result was encoded")
	}
}
