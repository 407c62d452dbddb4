package oplog

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLogToolCallJSON(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, "info", FormatJSON)
	LogToolCall(l, ToolCall{Tool: "BashCommand", Principal: "laptop", Status: "completed", Duration: 1500 * time.Microsecond, Bytes: 42})
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("record %q is not one JSON object: %v", b.String(), err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"bytes", "duration_ms", "error_code", "level", "msg", "principal", "request_id", "status", "time", "tool"}
	if !slices.Equal(keys, want) {
		t.Errorf("record keys = %v, want %v", keys, want)
	}
	if m["msg"] != MsgToolCall || m["principal"] == "laptop" || m["principal"] != PrincipalHash("laptop") || m["bytes"] != 42.0 {
		t.Errorf("record = %v", m)
	}
}

func TestNewLevels(t *testing.T) {
	for _, tt := range []struct {
		level string
		lines int
	}{{"debug", 2}, {"info", 1}, {"warn", 0}, {"off", 0}} {
		var b bytes.Buffer
		l := New(&b, tt.level, FormatText)
		l.Debug("d")
		l.Info("i")
		if got := strings.Count(b.String(), "\n"); got != tt.lines {
			t.Errorf("level %s wrote %d lines, want %d", tt.level, got, tt.lines)
		}
	}
}

func TestFileRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "winxd.log")
	f, err := OpenFile(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := []byte(strings.Repeat("x", 39) + "\n")
	for range 10 {
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 100 || fi.Size() == 0 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: size %d mode %v, want 1..100 bytes and 0600", p, fi.Size(), fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(path + ".2"); !os.IsNotExist(err) {
		t.Errorf("a second old file exists: %v", err)
	}
}

func TestHandlerKeepsFlusherAndRecords(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, "info", FormatJSON)
	h := Handler(l, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the wrapped writer lost http.Flusher")
		}
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("hello"))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/mcp?access_token=SECRETVALUE", nil))
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("record %q: %v", b.String(), err)
	}
	if m["msg"] != MsgHTTPRequest || m["status"] != 418.0 || m["bytes"] != 5.0 || m["path"] != "/mcp" || strings.Contains(b.String(), "SECRETVALUE") {
		t.Errorf("record = %s", b.String())
	}
}
