package runtime

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"winx/guardian"
	"winx/guardian/remote"
)

// TestFindLost: what a dead guardian left is found through its Record, or
// through the lost-record reader once the Record is gone; the newest
// journal and its screen sidecar are kept (0600) and counted, with their
// last lines.
func TestFindLost(t *testing.T) {
	state := t.TempDir()
	private := filepath.Join(state, "sessions", guardian.PrivateDirPrefix+"x")
	if err := os.MkdirAll(private, 0o700); err != nil {
		t.Fatal(err)
	}
	var journal strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&journal, "%d\n", i)
	}
	files := map[string]string{
		"output-1.txt":                         "old\n",
		"output-2.txt":                         journal.String(),
		"output-2.txt" + guardian.ScreenSuffix: "31\n32\n",
		"output-bg-1.txt":                      "background\n",
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(private, n), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "g.sock")
	const key = "k1"
	rec, _ := json.Marshal(remote.Record{PID: 1, Key: key, ShellDir: private})

	tests := []struct {
		name     string
		record   bool
		readLost LostRecordFunc
		found    bool
	}{
		{"record", true, nil, true},
		{"lost record", false, func(string) (string, bool) { return private, true }, true},
		{"nothing", false, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(remote.RecordPath(sock))
			if tc.record {
				if err := os.WriteFile(remote.RecordPath(sock), rec, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			keep := filepath.Join(state, LostDirName, tc.name)
			l, ok := findLost(sock, key, tc.readLost, keep)
			if ok != tc.found {
				t.Fatalf("findLost found = %v, want %v", ok, tc.found)
			}
			if !ok {
				return
			}
			if l.Generation != 2 || l.Lines != 32 {
				t.Errorf("findLost = generation %d, %d lines; want 2, 32", l.Generation, l.Lines)
			}
			if want := []string{"13", "32"}; len(l.Last) != MaxLostLines || l.Last[0] != want[0] || l.Last[len(l.Last)-1] != want[1] {
				t.Errorf("last lines = %q, want 13..32", l.Last)
			}
			if !strings.HasPrefix(l.Journal, keep+string(filepath.Separator)) {
				t.Fatalf("journal %s, want it kept under %s", l.Journal, keep)
			}
			b, err := os.ReadFile(l.Journal)
			if err != nil || string(b) != journal.String()+"31\n32\n" {
				t.Errorf("kept journal = %q, %v", b, err)
			}
			if fi, err := os.Stat(l.Journal); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("kept journal mode = %v, %v; want 0600", fi.Mode(), err)
			}
			if slices.Contains(l.Last, "background") {
				t.Errorf("a background journal was taken for the foreground one")
			}
		})
	}
}
