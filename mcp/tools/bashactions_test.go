package tools

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestActionTable checks that the action table covers the decoded action
// exactly: every action_json key but type is owned by one row, and the keys
// that imply a type when it is missing imply the same types as before the
// table.
func TestActionTable(t *testing.T) {
	var keys []string
	rt := reflect.TypeOf(action{})
	for i := range rt.NumField() {
		if k, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); k != "type" {
			keys = append(keys, k)
		}
	}
	owner := map[string]string{}
	for _, s := range actionTable {
		if s.run == nil {
			t.Errorf("action %q has no run", s.typ)
		}
		for _, f := range s.fields {
			if prev, ok := owner[f.key]; ok {
				t.Errorf("key %q is owned by %q and %q", f.key, prev, s.typ)
			}
			owner[f.key] = s.typ
		}
	}
	for _, k := range keys {
		if _, ok := owner[k]; !ok {
			t.Errorf("action_json key %q is owned by no row", k)
		}
	}
	if len(owner) != len(keys) {
		t.Errorf("the rows own %d keys, the action struct decodes %d", len(owner), len(keys))
	}
	if want := []string{"command", "status_check", "send_text", "send_specials", "send_ascii", "screen", "wait_for_turn", "jobs"}; !slices.Equal(actionTypeNames(), want) {
		t.Errorf("actionTypeNames() = %q, want %q", actionTypeNames(), want)
	}
	for _, tc := range []struct{ key, typ string }{
		{"command", "command"},
		{"send_text", "send_text"},
		{"send_specials", "send_specials"},
		{"send_ascii", "send_ascii"},
		{"bg_command_id", "status_check"},
		{"scrollback_lines", "status_check"},
		{"lines", "screen"},
		{"diff", "screen"},
		{"recognizer", "wait_for_turn"},
		{"quiet_ms", "wait_for_turn"},
		{"timeout_seconds", "wait_for_turn"},
		{"is_background", ""},
		{"allow_multi", ""},
		{"verbose", ""},
		{"submit", ""},
		{"type", ""},
	} {
		if got := impliedAction(tc.key); got != tc.typ {
			t.Errorf("impliedAction(%q) = %q, want %q", tc.key, got, tc.typ)
		}
	}
}
