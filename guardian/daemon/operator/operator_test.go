package operator

import (
	"slices"
	"testing"
)

func TestNewRows(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur []string
		want      []string
	}{
		{"nothing new", []string{"$ a", "x", "$ "}, []string{"$ a", "x", "$ "}, nil},
		{"appended", []string{"$ a", "x"}, []string{"$ a", "x", "y", "$ "}, []string{"y", "$ "}},
		{"last row completed", []string{"$ a", "$ ec"}, []string{"$ a", "$ echo hi", "hi"}, []string{"$ echo hi", "hi"}},
		{"scrolled by one", []string{"r1", "r2", "r3"}, []string{"r2", "r3", "r4"}, []string{"r4"}},
		{"from nothing", nil, []string{"a"}, []string{"a"}},
		{"cleared", []string{"a", "b"}, []string{"z"}, []string{"z"}},
	}
	for _, tt := range tests {
		if got := newRows(tt.prev, tt.cur); !slices.Equal(got, tt.want) {
			t.Errorf("%s: newRows = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestIsCommand(t *testing.T) {
	for _, name := range []string{List, Jobs, Attach, Kill, Prune, RestartDaemon, Doctor} {
		if !IsCommand(name) {
			t.Errorf("IsCommand(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"", "serve", "report", "LIST"} {
		if IsCommand(name) {
			t.Errorf("IsCommand(%q) = true, want false", name)
		}
	}
}
