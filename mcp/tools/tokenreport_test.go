package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"winx/codemap"
)

// answerSize is the bytes of one tools/call answer: the whole JSON-RPC
// result and the text the model reads.
type answerSize struct {
	name        string
	total, text int
	// output is the JSON bytes of structuredContent.output, the copy of
	// the text the seed contract requires.
	output int
}

func (e *bashEnv) measure(name, tool string, args map[string]any) answerSize {
	e.t.Helper()
	args["thread_id"], args["workspace_root"] = e.thread, e.root
	resp, err := e.client.Call(context.Background(), "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	var r toolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		e.t.Fatal(err)
	}
	out, _ := json.Marshal(r.Structured.Output)
	text := 0
	for _, c := range r.Content {
		text += len(c.Text)
	}
	if r.IsError {
		e.t.Errorf("%s failed: %s", name, resp.Result)
	}
	return answerSize{name, len(resp.Result), text, len(out)}
}

// typicalAnswers measures tools/list and the answers an agent sees most.
func typicalAnswers(t *testing.T) (list int, answers []answerSize) {
	e := newBashEnv(t, "")
	resp, err := e.client.Call(context.Background(), "tools/list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	list = len(resp.Result)

	answers = append(answers, e.measure("small BashCommand", BashCommandTool, map[string]any{"action_json": cmd("echo hello; ls /"), "wait_for_seconds": 10}))

	var src strings.Builder
	src.WriteString("package demo\n\nimport \"fmt\"\n\n")
	for i := 0; src.Len() < 1 || strings.Count(src.String(), "\n") < 235; i++ {
		fmt.Fprintf(&src, "// F%d prints its number.\nfunc F%d() {\n\tfmt.Println(%d)\n}\n\n", i, i, i)
	}
	lines := strings.SplitAfter(src.String(), "\n")[:235]
	path := filepath.Join(e.root, "demo.go")
	writeFile(t, path, strings.Join(lines, ""))
	answers = append(answers, e.measure("ReadFiles 235 lines", ReadFilesTool, map[string]any{"file_paths": []any{path}}))

	var old, repl strings.Builder
	for i := 20; i < 35; i++ {
		old.WriteString(lines[i])
		repl.WriteString(strings.ReplaceAll(lines[i], "prints", "writes"))
	}
	answers = append(answers, e.measure("15-line edit", EditFilesTool, map[string]any{"files": []any{map[string]any{
		"file_path": path, "mode": "search_replace",
		"content": "<<<<<<< SEARCH\n" + old.String() + "=======\n" + repl.String() + ">>>>>>> REPLACE\n",
	}}}))
	if codemap.Available() {
		answers = append(answers, e.measure("CodeMap outline", CodeMapTool, map[string]any{"operation": "outline", "path": "demo.go"}))
	}
	var big strings.Builder
	for i := 0; i < 1005; i++ {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	answers = append(answers, e.measure("created with replace (1005 lines)", EditFilesTool, map[string]any{"files": []any{map[string]any{
		"file_path": filepath.Join(e.root, "new.txt"), "mode": "replace", "content": big.String(),
	}}}))
	return list, answers
}

// TestTokenReport prints the bytes of tools/list and of typical answers
// (WINX_TOKEN_REPORT=1 go test -run TestTokenReport -v ./mcp/tools) and
// holds the budgets: tools/list under 12 KB, the small answers at most
// 1.3x their text.
func TestTokenReport(t *testing.T) {
	list, answers := typicalAnswers(t)
	report := os.Getenv("WINX_TOKEN_REPORT") != ""
	if report {
		t.Logf("tools/list: %d bytes", list)
	}
	if list >= 12000 {
		t.Errorf("tools/list is %d bytes, want under 12000", list)
	}
	for _, a := range answers {
		if report {
			t.Logf("%-36s total %6d bytes, text %6d bytes, total/text %.2f, without the output copy %.2f",
				a.name, a.total, a.text, float64(a.total)/float64(max(a.text, 1)), float64(a.total-a.output)/float64(max(a.text, 1)))
		}
	}
}

func TestTokenDump(t *testing.T) {
	if os.Getenv("WINX_TOKEN_DUMP") == "" {
		t.Skip("WINX_TOKEN_DUMP=1 prints the answers")
	}
	e := newBashEnv(t, "")
	t.Log(e.rawCall(BashCommandTool, map[string]any{"action_json": cmd("echo hello; ls /"), "wait_for_seconds": 10}))
	path := filepath.Join(e.root, "a.go")
	writeFile(t, path, "package a\n\nfunc A() {}\n\nfunc B() {}\n")
	t.Log(e.rawCall(ReadFilesTool, map[string]any{"file_paths": []any{path}}))
	t.Log(e.rawCall(EditFilesTool, map[string]any{"files": []any{map[string]any{"file_path": path, "mode": "search_replace", "content": "<<<<<<< SEARCH\nfunc A() {}\n=======\nfunc A() { return }\n>>>>>>> REPLACE\n"}}}))
	if codemap.Available() {
		t.Log(e.rawCall(CodeMapTool, map[string]any{"operation": "outline", "path": "a.go"}))
	}
	t.Log(e.rawCall(EditFilesTool, map[string]any{"files": []any{map[string]any{"file_path": filepath.Join(e.root, "n.txt"), "mode": "replace", "content": "x\ny\n"}}}))
}

func TestToolsListParts(t *testing.T) {
	if os.Getenv("WINX_TOKEN_DUMP") == "" {
		t.Skip("WINX_TOKEN_DUMP=1 prints the parts of tools/list")
	}
	e := newBashEnv(t, "")
	resp, _ := e.client.Call(context.Background(), "tools/list", map[string]any{})
	var l struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	json.Unmarshal(resp.Result, &l)
	for _, tl := range l.Tools {
		parts := ""
		for k, v := range tl {
			parts += fmt.Sprintf(" %s=%d", k, len(v))
		}
		t.Logf("%s:%s", tl["name"], parts)
	}
}
