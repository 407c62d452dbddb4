package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"winx/jsonrpc"
)

// TestHandleAnswers pins winxd's answers byte for byte (code, message and
// data of each error; the result of each success) and what the operational
// log is told of each call: unknown methods, params that do not decode,
// malformed ensures, a spawn that fails, list and shutdown. The server is
// the real one over an empty socket directory; it has no guardian binary,
// so an ensure that passes validation fails to spawn.
func TestHandleAnswers(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	var got []Request
	srv := NewServer(Options{Dir: dir, OnRequest: func(r Request) { got = append(got, r) }})
	tests := []struct {
		name, method, params string
		wantErr              string // the error object; "" for a result
		wantRes              string // the result, when wantErr is ""
		wantOutcome          string
		wantKeyHash          bool
	}{
		{name: "unknown", method: "daemon.nope", wantErr: `{"code":-32601,"message":"daemon: unknown method daemon.nope"}`, wantOutcome: OutcomeError},
		{name: "empty method", method: "", wantErr: `{"code":-32601,"message":"daemon: unknown method "}`, wantOutcome: OutcomeError},
		{name: "a guardian's method", method: "session.run", params: `{}`, wantErr: `{"code":-32601,"message":"daemon: unknown method session.run"}`, wantOutcome: OutcomeError},
		{name: "case matters", method: "Daemon.List", wantErr: `{"code":-32601,"message":"daemon: unknown method Daemon.List"}`, wantOutcome: OutcomeError},
		{name: "ensure params not an object", method: MethodEnsure, params: `[1]`,
			wantErr: `{"code":-32602,"message":"daemon: json: cannot unmarshal array into Go value of type daemon.EnsureParams"}`, wantOutcome: OutcomeError},
		{name: "ensure without key", method: MethodEnsure, params: `{}`,
			wantErr: fmt.Sprintf(`{"code":-32022,"message":"daemon: a key of 1 to %d bytes is required"}`, MaxKeyBytes), wantOutcome: OutcomeError},
		{name: "ensure relative dir", method: MethodEnsure, params: `{"key":"k","dir":"rel"}`,
			wantErr: `{"code":-32022,"message":"daemon: dir must be absolute"}`, wantOutcome: OutcomeError, wantKeyHash: true},
		{name: "ensure no binary", method: MethodEnsure, params: fmt.Sprintf(`{"key":"k","dir":%q}`, work),
			wantErr: `{"code":-32021,"message":"daemon: guardian did not start: no winx-guardian binary configured"}`, wantOutcome: OutcomeError, wantKeyHash: true},
		{name: "list", method: MethodList, wantRes: `{"guardians":null}`, wantOutcome: OutcomeOK},
		{name: "list ignores its params", method: MethodList, params: `[1]`, wantRes: `{"guardians":null}`, wantOutcome: OutcomeOK},
		{name: "shutdown params not an object", method: MethodShutdown, params: `"x"`,
			wantErr: `{"code":-32602,"message":"daemon: json: cannot unmarshal string into Go value of type daemon.ShutdownParams"}`, wantOutcome: OutcomeError},
		{name: "shutdown", method: MethodShutdown, params: `{"reason":"test over"}`, wantRes: `{}`, wantOutcome: OutcomeOK},
	}
	for _, tt := range tests {
		got = got[:0]
		req := &jsonrpc.Request{Method: tt.method, ID: jsonrpc.Int64ID(1)}
		if tt.params != "" {
			req.Params = json.RawMessage(tt.params)
		}
		res, err := srv.Handle(t.Context(), req)
		var gotErr string
		if err != nil {
			var we *jsonrpc.Error
			if !errors.As(err, &we) {
				t.Errorf("%s: Handle = %v, not a wire error", tt.name, err)
				continue
			}
			b, _ := json.Marshal(we)
			gotErr = string(b)
		}
		if gotErr != tt.wantErr || tt.wantErr == "" && string(res) != tt.wantRes {
			t.Errorf("%s: Handle(%s %s) = %s, error %s; want %s, error %s", tt.name, tt.method, tt.params, res, gotErr, tt.wantRes, tt.wantErr)
		}
		if len(got) != 1 {
			t.Errorf("%s: OnRequest told %d times, want once", tt.name, len(got))
			continue
		}
		r := got[0]
		if r.Method != tt.method || r.Outcome != tt.wantOutcome || (r.KeyHash != "") != tt.wantKeyHash || len(r.KeyHash) != 0 && len(r.KeyHash) != 12 {
			t.Errorf("%s: OnRequest(%+v), want method %q outcome %s key hash %v", tt.name, r, tt.method, tt.wantOutcome, tt.wantKeyHash)
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) && r.Code != we.Code {
			t.Errorf("%s: OnRequest code %d, want %d", tt.name, r.Code, we.Code)
		}
	}
	select {
	case reason := <-srv.shutdown:
		if reason != "shutdown requested: test over" {
			t.Errorf("shutdown reason %q", reason)
		}
	default:
		t.Error("daemon.shutdown asked for no shutdown")
	}
}
