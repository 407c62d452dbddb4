package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// TestMethodTable walks winxd's method table: one row per method, each
// with a call, every one announced in the hello and nothing else, only the
// ensure keyed; a method without a row gets the unknown-method error
// winxd always gave.
func TestMethodTable(t *testing.T) {
	srv := NewServer(Options{Dir: t.TempDir()})
	rows := methods()
	seen := map[string]bool{}
	for _, m := range rows {
		if seen[m.name] {
			t.Errorf("method %s has two rows", m.name)
		}
		seen[m.name] = true
		if m.call == nil {
			t.Errorf("method %s has no call", m.name)
		}
		if m.keyed != (m.name == MethodEnsure) {
			t.Errorf("method %s keyed = %v: only an ensure names a session key", m.name, m.keyed)
		}
		if srv.table[m.name] == nil {
			t.Errorf("method %s is not in the server's table", m.name)
		}
	}
	if len(srv.table) != len(rows) {
		t.Errorf("the server's table has %d methods, the rows %d", len(srv.table), len(rows))
	}
	if got, want := strings.Join(srv.Hello().Capabilities, ","), strings.Join(methodNames(), ","); got != want {
		t.Errorf("hello announces %s, want the table's %s", got, want)
	}
	for _, name := range []string{MethodEnsure, MethodList, MethodShutdown} {
		if !seen[name] {
			t.Errorf("no row for %s", name)
		}
	}
	for _, name := range []string{"", "daemon.", "daemon.nope", "session.run", "DAEMON.ENSURE", MethodEnsure + " "} {
		_, err := srv.Handle(t.Context(), &jsonrpc.Request{Method: name, ID: jsonrpc.Int64ID(1)})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeMethodNotFound || we.Message != "daemon: unknown method "+name || we.Data != nil {
			t.Errorf("Handle(%q) = %v, want -32601 %q", name, err, "daemon: unknown method "+name)
		}
	}
}

// TestMethodTableRefusesBadRows: a bad row is a programming error, found
// when the server is made.
func TestMethodTableRefusesBadRows(t *testing.T) {
	call := noParams(func(*Server, context.Context) (any, error) { return struct{}{}, nil })
	tests := []struct {
		name string
		rows []method
	}{
		{"duplicate", []method{{name: "a", call: call}, {name: "a", call: call}}},
		{"no call", []method{{name: "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("methodTable(%s) did not panic", tt.name)
				}
			}()
			methodTable(tt.rows)
		})
	}
}
