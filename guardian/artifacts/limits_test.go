package artifacts

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// The limits are checked with sparse files: apparent size is what counts,
// so a 65 MiB file costs no disk.
func TestCheckLimits(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		limit Limit // "" means within budget
		dir   string
		usage int64
		max   int64
	}{
		{"empty session", func(t *testing.T, root string) {}, "", "", 0, 0},
		{"session at its byte limit", func(t *testing.T, root string) {
			sparse(t, filepath.Join(SessionDir(root, idA), "f"), MaxSessionBytes)
		}, "", "", 0, 0},
		{"session over its byte limit", func(t *testing.T, root string) {
			sparse(t, filepath.Join(SessionDir(root, idA), "f"), MaxSessionBytes+1)
		}, LimitSessionBytes, "session-" + idA, MaxSessionBytes + 1, MaxSessionBytes},
		{"session bytes spread over helpers", func(t *testing.T, root string) {
			for _, h := range []string{"a", "b", "c"} {
				sparse(t, filepath.Join(SessionDir(root, idA), h, "f"), 30<<20)
			}
		}, LimitSessionBytes, "session-" + idA, 90 << 20, MaxSessionBytes},
		{"session at its file limit", func(t *testing.T, root string) {
			for i := range MaxSessionFiles {
				sparse(t, filepath.Join(SessionDir(root, idA), fmt.Sprintf("h%d", i%3), fmt.Sprint(i)), 1)
			}
		}, "", "", 0, 0},
		{"session over its file limit", func(t *testing.T, root string) {
			for i := range MaxSessionFiles + 1 {
				sparse(t, filepath.Join(SessionDir(root, idA), fmt.Sprint(i)), 1)
			}
		}, LimitSessionFiles, "session-" + idA, MaxSessionFiles + 1, MaxSessionFiles},
		{"helper at its limit", func(t *testing.T, root string) {
			sparse(t, filepath.Join(SessionDir(root, idA), "agent", "f"), MaxHelperBytes)
		}, "", "", 0, 0},
		{"helper over its limit", func(t *testing.T, root string) {
			sparse(t, filepath.Join(SessionDir(root, idA), "small", "f"), 1)
			sparse(t, filepath.Join(SessionDir(root, idA), "agent", "deep", "f"), MaxHelperBytes+1)
		}, LimitHelperBytes, "session-" + idA + "/agent", MaxHelperBytes + 1, MaxHelperBytes},
		{"files beside helpers count to the session only", func(t *testing.T, root string) {
			sparse(t, filepath.Join(SessionDir(root, idA), "big"), MaxHelperBytes+1)
		}, "", "", 0, 0},
		{"workspace over the mark", func(t *testing.T, root string) {
			for _, id := range []string{idB, idC} {
				sparse(t, filepath.Join(SessionDir(root, id), "f"), 60<<20)
			}
			sparse(t, filepath.Join(Dir(root), "loose"), 140<<20)
		}, LimitWorkspaceBytes, "tmp", 260 << 20, MaxWorkspaceBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.setup(t, root)
			u, err := Scan(root)
			if err != nil {
				t.Fatal(err)
			}
			err = u.Check(idA, nil)
			if tt.limit == "" {
				if err != nil {
					t.Errorf("Check = %v, want nil", err)
				}
				return
			}
			var oe *OverBudgetError
			if !errors.As(err, &oe) || !errors.Is(err, ErrOverBudget) {
				t.Fatalf("Check = %v, want an *OverBudgetError", err)
			}
			if oe.Limit != tt.limit || oe.Usage != tt.usage || oe.Max != tt.max {
				t.Errorf("Check = %s %d/%d, want %s %d/%d", oe.Limit, oe.Usage, oe.Max, tt.limit, tt.usage, tt.max)
			}
			if want := filepath.Join(Dir(root), tt.dir); oe.Dir != want && !(tt.dir == "tmp" && oe.Dir == Dir(root)) {
				t.Errorf("Check dir = %q, want %q", oe.Dir, want)
			}
		})
	}
}

func TestCheckLoweredLimits(t *testing.T) {
	root := t.TempDir()
	sparse(t, filepath.Join(SessionDir(root, idA), "f"), 2000)
	u, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var oe *OverBudgetError
	if err := u.Check(idA, &Limits{SessionBytes: 1000}); !errors.As(err, &oe) || oe.Limit != LimitSessionBytes || oe.Max != 1000 {
		t.Errorf("Check(SessionBytes 1000) = %v, want session_bytes over 1000", err)
	}
	if err := u.Check(idA, &Limits{}); err != nil {
		t.Errorf("Check(zero Limits) = %v, want the defaults", err)
	}
}

func TestPressure(t *testing.T) {
	root := t.TempDir()
	sparse(t, filepath.Join(SessionDir(root, idA), "agent", "f"), 28<<20) // 87.5% of a helper
	sparse(t, filepath.Join(SessionDir(root, idB), "f"), 10<<20)
	u, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	if p := u.Pressure(idA, nil); p != 0.875 {
		t.Errorf("Pressure(A) = %v, want 0.875 (its helper)", p)
	}
	if p := u.Pressure(idB, nil); p != 10.0/64 {
		t.Errorf("Pressure(B) = %v, want %v", p, 10.0/64)
	}
}
