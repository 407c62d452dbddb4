package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"winx/codemap"
)

func needNavigation(t *testing.T) {
	t.Helper()
	if !codemap.Available() {
		t.Skip("code navigation needs a cgo build")
	}
}

func (e *bashEnv) codeMap(args map[string]any) (*toolResult, codeMapData) {
	e.t.Helper()
	args["thread_id"], args["workspace_root"] = e.thread, e.root
	r := e.call(CodeMapTool, args)
	var d codeMapData
	if len(r.Structured.Data) > 0 {
		if err := json.Unmarshal(r.Structured.Data, &d); err != nil {
			e.t.Fatalf("data: %v", err)
		}
	}
	return r, d
}

func TestCodeMapOutlineFile(t *testing.T) {
	needNavigation(t)
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "svc", "server.go"),
		"package svc\n\ntype Server struct{}\n\nfunc (s *Server) Start() error { return nil }\n\nfunc New() *Server { return &Server{} }\n")
	r, d := e.codeMap(map[string]any{"operation": "outline", "path": "svc/server.go"})
	if r.IsError || r.Structured.Status != "completed" {
		t.Fatalf("outline = %+v", r.Structured)
	}
	var got []string
	for _, s := range d.Symbols {
		got = append(got, fmt.Sprintf("%d %s %s %s", s.Line, s.Kind, s.Container, s.Name))
	}
	want := []string{"3 struct  Server", "5 method Server Start", "7 function  New"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("symbols = %q, want %q", got, want)
	}
	if d.Language != "go" || d.Path != filepath.Join(e.root, "svc", "server.go") {
		t.Errorf("language %q path %q", d.Language, d.Path)
	}
	if !strings.Contains(r.Structured.Output, "  5 method Server.Start") {
		t.Errorf("output = %q", r.Structured.Output)
	}
}

func TestCodeMapUnsupportedFileOffersReadFiles(t *testing.T) {
	needNavigation(t)
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "notes.txt"), "plain text\n")
	r, _ := e.codeMap(map[string]any{"operation": "outline", "path": "notes.txt"})
	if !r.IsError || r.Structured.Status != "invalid_input" || r.Structured.ErrorCode != codeUnsupportedLanguage {
		t.Fatalf("unsupported = %+v", r.Structured)
	}
	na := r.Structured.NextAction
	if na == nil || na.Tool != ReadFilesTool {
		t.Fatalf("nextAction = %+v, want ReadFiles", na)
	}
	next := e.callNext(t, r)
	if next.IsError || !strings.Contains(next.Structured.Output, "plain text") {
		t.Errorf("the ReadFiles nextAction did not read the file: %+v", next.Structured)
	}
}

func TestCodeMapDirectoryRanksReadFilesAndPages(t *testing.T) {
	needNavigation(t)
	e := newBashEnv(t, "")
	for i := range 40 {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\n", i)
		for j := range 10 {
			fmt.Fprintf(&b, "func F%d_%d() {}\n", i, j)
		}
		writeFile(t, filepath.Join(e.root, "pkg", fmt.Sprintf("p%02d", i), "p.go"), b.String())
	}
	writeFile(t, filepath.Join(e.root, "deep", "a", "b", "c", "read.go"), "package c\n\nfunc ReadMe() {}\n")
	writeFile(t, filepath.Join(e.root, "deep", "x", "outlined.go"), "package x\n\nfunc Outlined() {}\n")
	writeFile(t, filepath.Join(e.root, ".gitignore"), "ignored/\n")
	writeFile(t, filepath.Join(e.root, "ignored", "skip.go"), "package ignored\n\nfunc Skip() {}\n")

	if r, _ := e.read("deep/a/b/c/read.go"); r.IsError {
		t.Fatalf("read: %+v", r.Structured)
	}
	if r, _ := e.codeMap(map[string]any{"path": "deep/x/outlined.go"}); r.IsError {
		t.Fatalf("outline: %+v", r.Structured)
	}
	r, d := e.codeMap(map[string]any{"operation": "outline", "max_results": 12})
	if r.IsError || len(d.Files) != 12 || d.NextCursor == "" {
		t.Fatalf("map = %+v (%d files)", r.Structured, len(d.Files))
	}
	if d.Files[0].Path != "deep/x/outlined.go" || d.Files[1].Path != "deep/a/b/c/read.go" || d.Files[1].Reason != "priority" {
		t.Errorf("map starts %s, %s; want the outlined then the read file", d.Files[0].Path, d.Files[1].Path)
	}
	seen := map[string]bool{}
	pages := 0
	for {
		pages++
		for _, f := range d.Files {
			if seen[f.Path] {
				t.Errorf("page %d repeats %s", pages, f.Path)
			}
			if strings.HasPrefix(f.Path, "ignored/") {
				t.Errorf("git-ignored %s in the map", f.Path)
			}
			seen[f.Path] = true
		}
		if d.Tokens > d.Budget {
			t.Errorf("page %d: %d tokens over the budget %d", pages, d.Tokens, d.Budget)
		}
		if d.NextCursor == "" {
			break
		}
		if pages > 10 {
			t.Fatal("no last page")
		}
		// Reading another file between pages must not reshuffle the map.
		if pages == 1 {
			e.read("pkg/p39/p.go")
		}
		next := e.callNext(t, r)
		d = codeMapData{}
		if err := json.Unmarshal(next.Structured.Data, &d); err != nil || next.IsError {
			t.Fatalf("page %d: %s %s %s", pages+1, next.Structured.Status, next.Structured.ErrorCode, next.Structured.Output)
		}
		r = next
	}
	if len(seen) != 42 {
		t.Errorf("pages covered %d files, want 42", len(seen))
	}
}

func TestCodeMapReferences(t *testing.T) {
	needNavigation(t)
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "a", "def.go"), "package a\n\n// Target is defined here.\nfunc Target() {}\n")
	writeFile(t, filepath.Join(e.root, "b", "use.go"),
		"package b\n\nfunc use() {\n\ta.Target()\n\ts := \"Target in a string\" // Target in a comment\n\t_ = s\n\tTarget := \"AKIAIOSFODNN7EXAMPLE\"\n\t_ = Target\n}\n")
	r, d := e.codeMap(map[string]any{"operation": "references", "name": "Target"})
	if r.IsError {
		t.Fatalf("references = %+v", r.Structured)
	}
	var got []string
	for _, h := range d.Hits {
		got = append(got, fmt.Sprintf("%s:%d:%d:%v", h.Path, h.Line, h.Column, h.Definition))
	}
	want := []string{"a/def.go:4:6:true", "b/use.go:4:4:false", "b/use.go:7:2:false", "b/use.go:8:6:false"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("hits = %q\nwant %q", got, want)
	}
	if d.Total != 4 || d.Definitions != 1 {
		t.Errorf("total %d definitions %d", d.Total, d.Definitions)
	}
	if strings.Contains(r.Structured.Output, "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(r.Structured.Output, "[REDACTED:") {
		t.Errorf("secret in a hit's line not redacted: %q", r.Structured.Output)
	}
	for _, h := range d.Hits {
		if strings.Contains(h.Text, "AKIA") {
			t.Errorf("data hit text not redacted: %q", h.Text)
		}
	}
	// Paged: one hit per page, continued through nextAction.
	r, d = e.codeMap(map[string]any{"operation": "references", "name": "Target", "max_results": 1, "path": "b"})
	if len(d.Hits) != 1 || d.NextCursor == "" || r.Structured.NextAction == nil {
		t.Fatalf("paged = %+v", r.Structured)
	}
	next := e.callNext(t, r)
	var d2 codeMapData
	if err := json.Unmarshal(next.Structured.Data, &d2); err != nil || len(d2.Hits) != 1 || d2.Hits[0].Line == d.Hits[0].Line {
		t.Errorf("second page = %+v", next.Structured)
	}
	// A cursor is refused by another request.
	r, _ = e.codeMap(map[string]any{"operation": "references", "name": "Other", "cursor": d.NextCursor})
	if r.Structured.Status != "invalid_input" || r.Structured.ErrorCode != codeInvalidToolInput {
		t.Errorf("foreign cursor = %+v", r.Structured)
	}
}

func TestCodeMapInputErrors(t *testing.T) {
	e := newBashEnv(t, "")
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "x.go"), "package x\n")
	type errCase struct {
		name   string
		args   map[string]any
		status string
		code   string
	}
	tests := []errCase{
		{"references without name", map[string]any{"operation": "references"}, "invalid_input", codeInvalidToolInput},
		{"unknown operation", map[string]any{"operation": "grep"}, "invalid_input", codeInvalidToolInput},
		{"unknown field", map[string]any{"operation": "outline", "depth": 3}, "invalid_input", codeInvalidToolInput},
		{"max_results too big", map[string]any{"operation": "references", "name": "x", "max_results": 5000}, "invalid_input", codeInvalidToolInput},
	}
	if codemap.Available() {
		tests = append(tests,
			errCase{"outside the workspace", map[string]any{"path": filepath.Join(outside, "x.go")}, "denied", codeFileOperationDenied},
			errCase{"missing path", map[string]any{"path": "nope.go"}, "not_found", codeFileNotFound},
			errCase{"garbage cursor", map[string]any{"cursor": "!!"}, "invalid_input", codeInvalidToolInput},
		)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := e.codeMap(tc.args)
			if !r.IsError || r.Structured.Status != tc.status || r.Structured.ErrorCode != tc.code {
				t.Errorf("CodeMap(%v) = %s/%s (%s), want %s/%s", tc.args, r.Structured.Status, r.Structured.ErrorCode, r.Structured.Output, tc.status, tc.code)
			}
		})
	}
	// Without a session binding.
	r := e.call(CodeMapTool, map[string]any{"operation": "outline", "thread_id": e.thread, "workspace_root": ""})
	if r.Structured.ErrorCode != codeWorkspaceBindingRequired {
		t.Errorf("no workspace_root = %+v", r.Structured)
	}
}

func TestCodeMapUnavailableWithoutCgo(t *testing.T) {
	if codemap.Available() {
		t.Skip("this build can parse; the unavailable answer is for builds without cgo")
	}
	e := newBashEnv(t, "")
	writeFile(t, filepath.Join(e.root, "a.go"), "package a\n")
	for _, args := range []map[string]any{{"path": "a.go"}, {"operation": "references", "name": "a"}, {}} {
		r, _ := e.codeMap(args)
		if !r.IsError || r.Structured.Status != "failed" || r.Structured.ErrorCode != codeNavigationUnavailable ||
			!strings.Contains(r.Structured.Output, "unavailable in this build") {
			t.Errorf("CodeMap(%v) without cgo = %+v", args, r.Structured)
		}
	}
}

func TestCodeMapListedReadOnly(t *testing.T) {
	e := newBashEnv(t, "")
	resp, err := e.client.Call(context.Background(), "tools/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Required []string `json:"required"`
			} `json:"inputSchema"`
			Annotations struct {
				ReadOnlyHint *bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := resp.Decode(&list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name != CodeMapTool {
			continue
		}
		if tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
			t.Errorf("CodeMap is not annotated read-only")
		}
		if !slices.Contains(tool.InputSchema.Required, "thread_id") || !slices.Contains(tool.InputSchema.Required, "workspace_root") {
			t.Errorf("required = %q", tool.InputSchema.Required)
		}
		return
	}
	t.Errorf("CodeMap is not listed")
}
