package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/mcp/session"
)

// TestCodeMapHelperFileCapped: a CodeMap call on a file under the session's
// WINX_TEMP_DIR outlines that one file with its text and data capped at
// 12 KiB; a directory there is refused.
func TestCodeMapHelperFileCapped(t *testing.T) {
	needNavigation(t)
	e := newBashEnv(t, "")
	var src strings.Builder
	src.WriteString("package gen\n\n")
	for i := range 1500 {
		fmt.Fprintf(&src, "func GeneratedHelperFunctionWithALongName%04d() {}\n", i)
	}
	gen := filepath.Join(e.tempDir(), "helper", "gen.go")
	writeFile(t, gen, src.String())
	// The same file in the workspace is outlined in full (up to the
	// general caps): only the temporary directory is capped.
	writeFile(t, filepath.Join(e.root, "gen.go"), src.String())
	_, full := e.codeMap(map[string]any{"path": "gen.go"})
	if len(full.Symbols) < 1000 {
		t.Fatalf("workspace outline has %d symbols, want the file's 1500 up to the general caps", len(full.Symbols))
	}

	r, d := e.codeMap(map[string]any{"path": gen})
	if r.Structured.Status != "completed" || !d.Truncated || len(d.Symbols) == 0 {
		t.Fatalf("helper outline = %+v, truncated %v, %d symbols", r.Structured, d.Truncated, len(d.Symbols))
	}
	if n := len(r.Structured.Output); n > maxHelperOutlineBytes {
		t.Errorf("helper outline text is %d bytes, over %d", n, maxHelperOutlineBytes)
	}
	// The data is the symbols plus a few short fields and the path.
	if n := len(r.Structured.Data); n > maxHelperOutlineBytes+len(gen)+256 {
		t.Errorf("helper outline data is %d bytes, over %d", n, maxHelperOutlineBytes)
	}
	for _, p := range []string{filepath.Dir(gen), e.tempDir()} {
		r, _ := e.codeMap(map[string]any{"path": p})
		if r.Structured.Status != "invalid_input" || r.Structured.ErrorCode != codeInvalidToolInput {
			t.Errorf("outline of the directory %s = %s/%s, want invalid_input", p, r.Structured.Status, r.Structured.ErrorCode)
		}
	}
	r, _ = e.codeMap(map[string]any{"operation": "references", "name": "gen", "path": gen})
	if r.Structured.Status != "invalid_input" {
		t.Errorf("references on a helper file = %s, want invalid_input", r.Structured.Status)
	}
}

// TestCodeMapHelperBudget: a session maps at most 24 unique temporary files
// in at most 64 calls; workspace sources stay unlimited.
func TestCodeMapHelperBudget(t *testing.T) {
	needNavigation(t)
	e := newBashEnv(t, "")
	tmp := e.tempDir()
	var files []string
	for i := range session.MaxHelperCodeMapFiles + 1 {
		p := filepath.Join(tmp, fmt.Sprintf("h%02d", i), "x.go")
		writeFile(t, p, fmt.Sprintf("package x\n\nfunc F%d() {}\n", i))
		files = append(files, p)
	}
	writeFile(t, filepath.Join(e.root, "main.go"), "package main\n\nfunc main() {}\n")
	want := func(p, status, code string) {
		t.Helper()
		r, _ := e.codeMap(map[string]any{"path": p})
		if r.Structured.Status != status || r.Structured.ErrorCode != code {
			t.Fatalf("CodeMap %s = %s/%s (%s), want %s/%s", p, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, status, code)
		}
	}
	// A missing file is not a call the budget counts.
	want(filepath.Join(tmp, "missing.go"), "not_found", codeFileNotFound)
	calls := 0
	for _, p := range files[:session.MaxHelperCodeMapFiles] {
		want(p, "completed", "")
		calls++
	}
	want(files[session.MaxHelperCodeMapFiles], "denied", codeHelperCodeMapBudget)
	for calls < session.MaxHelperCodeMapCalls {
		want(files[calls%session.MaxHelperCodeMapFiles], "completed", "")
		calls++
	}
	want(files[0], "denied", codeHelperCodeMapBudget)
	// Canonical sources are not charged.
	for range 3 {
		want("main.go", "completed", "")
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Fatal(err)
	}
}
