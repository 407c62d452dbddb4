package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestExitRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "winx")
	if _, err := ReadExitRecord(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadExitRecord of nothing = %v, want fs.ErrNotExist", err)
	}
	want := ExitRecord{State: StateExited, Reason: "shutdown requested", PID: 42, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := WriteExitRecord(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadExitRecord(dir)
	if err != nil || got != want {
		t.Fatalf("ReadExitRecord = %+v, %v; want %+v", got, err, want)
	}
	for _, p := range []string{dir, filepath.Join(dir, ExitFileName)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		wantMode := os.FileMode(0o600)
		if fi.IsDir() {
			wantMode = 0o700
		}
		if fi.Mode().Perm() != wantMode {
			t.Errorf("%s mode = %v, want %v", p, fi.Mode().Perm(), wantMode)
		}
	}
}

func TestStateDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/winx"},
		{map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.local/state/winx"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := StateDir(env(tt.env)); got != tt.want {
			t.Errorf("StateDir(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}
