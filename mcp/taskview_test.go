package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A 2026-07-28 tools/call answered with a task is read by strict validators
// as a CallToolResult, so the creation answer carries "content":[]; tasks/get
// answers never do.
func TestTaskViewContent(t *testing.T) {
	store := newTaskStore(func() time.Time { return time.Unix(0, 0) })
	tk := store.create("", func() {})

	created := store.view(tk, false)
	created.ResultType = ResultTask
	created.Content = []Content{}
	if b := mustMarshal(created); !strings.Contains(string(b), `"content":[]`) {
		t.Errorf("creation answer = %s, want \"content\":[]", b)
	}

	detailed := store.view(tk, true)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(mustMarshal(detailed), &keys); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys["content"]; ok {
		t.Errorf("tasks/get answer has a content key: %s", mustMarshal(detailed))
	}
}
