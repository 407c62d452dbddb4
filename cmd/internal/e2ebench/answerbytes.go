package main

// The answer-size rows: how many bytes the model receives per call, in the
// two views clients give it. Claude Code and VS Code hand the model only a
// result's structuredContent (as JSON) when it has one; other clients hand
// it only the text blocks. Both views count, for the calls of a small task:
// read a Go file, one search/replace edit, a short command, a git diff.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// answerViews is what the model receives of one answer.
type answerViews struct {
	text, json int
}

// viewsOf measures a tools/call answer line: the text view is the joined
// text blocks, the JSON view the compact structuredContent (the text view
// when there is none, as clients then fall back to the text).
func viewsOf(line []byte) (answerViews, error) {
	var a struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		return answerViews{}, err
	}
	var texts []string
	for _, c := range a.Result.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	v := answerViews{text: len(strings.Join(texts, "\n"))}
	v.json = v.text
	if len(a.Result.Structured) > 0 && string(a.Result.Structured) != "null" {
		var b bytes.Buffer
		if err := json.Compact(&b, a.Result.Structured); err != nil {
			return answerViews{}, err
		}
		v.json = b.Len()
	}
	return v, nil
}

// taskFile is the file the rows read and edit: Go's container/list, the
// file of the task the rows come from, or a generated file of its size.
func taskFile() []byte {
	if b, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "container", "list", "list.go")); err == nil {
		return b
	}
	var b bytes.Buffer
	b.WriteString("package list\n\n")
	for i := range 58 {
		fmt.Fprintf(&b, "// F%d returns <%d>.\nfunc F%d() int {\n\treturn %d\n}\n", i, i, i, i)
	}
	return b.Bytes()
}

// taskSearch is the one search/replace edit of the rows: a comment line of
// the task file, changed.
const (
	taskSearch  = "// Init initializes or clears list l."
	taskReplace = "// Init initializes or clears the list l."
)

// answerRow is one call of the task and what the model received.
type answerRow struct {
	name  string
	views answerViews
}

// measureAnswers runs the task's calls against winx (server, a stdio
// command line) in a fresh workspace under tmp and returns each call's
// views.
func measureAnswers(tmp, server string) ([]answerRow, error) {
	ws := filepath.Join(tmp, "answers-ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return nil, err
	}
	src := taskFile()
	if !bytes.Contains(src, []byte(taskSearch)) {
		src = append(src, "\n"+taskSearch+"\n"...)
	}
	file := filepath.Join(ws, "list.go")
	if err := os.WriteFile(file, src, 0o600); err != nil {
		return nil, err
	}
	p, err := startPeer(server)
	if err != nil {
		return nil, err
	}
	defer p.close()
	if _, err := p.call("initialize", map[string]any{
		"protocolVersion": protocol, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2ebench-answers", "version": "1"}}); err != nil {
		return nil, err
	}
	if err := p.notify("notifications/initialized"); err != nil {
		return nil, err
	}
	line, err := p.call("tools/call", map[string]any{"name": "Initialize", "arguments": map[string]any{"type": "first_call", "any_workspace_path": ws}})
	if err != nil {
		return nil, err
	}
	tid, root, err := sessionOf(line)
	if err != nil {
		return nil, err
	}
	bind := func(args map[string]any) map[string]any {
		args["thread_id"], args["workspace_root"] = tid, root
		return args
	}
	command := func(cmd string) map[string]any {
		return bind(map[string]any{"action_json": map[string]any{"type": "command", "command": cmd}})
	}
	var rows []answerRow
	call := func(name, tool string, args map[string]any) error {
		line, err := p.call("tools/call", map[string]any{"name": tool, "arguments": args})
		if err != nil {
			return err
		}
		if name == "" {
			return nil
		}
		v, err := viewsOf(line)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rows = append(rows, answerRow{name, v})
		return nil
	}
	// An untimed first command and a commit, so the diff has a base.
	if err := call("", "BashCommand", command("git init -q && git add -A && git -c user.email=bench@example.invalid -c user.name=bench commit -qm base")); err != nil {
		return nil, err
	}
	lines := bytes.Count(src, []byte("\n"))
	steps := []struct {
		name, tool string
		args       map[string]any
	}{
		{rowRead(lines), "ReadFiles", bind(map[string]any{"file_paths": []string{file}})},
		{rowEdit, "EditFiles", bind(map[string]any{"files": []map[string]any{{
			"file_path": file, "mode": "search_replace",
			"content": "<<<<<<< SEARCH\n" + taskSearch + "\n=======\n" + taskReplace + "\n>>>>>>> REPLACE",
		}}})},
		{rowCommand, "BashCommand", command(shortCommand)},
		{rowDiff, "BashCommand", command("git diff")},
	}
	for _, s := range steps {
		if err := call(s.name, s.tool, s.args); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// Row names, shared by winx's rows and the peers' so they line up.
const (
	rowEdit    = "one search/replace edit"
	rowCommand = "a short command (two lines)"
	rowDiff    = "git diff"
	// shortCommand prints two lines, as a `go vet` with one finding does.
	shortCommand = "printf '%s\\n' 'list.go:12: ok' 'vet: done'"
)

func rowRead(lines int) string { return fmt.Sprintf("read a %d-line Go file", lines) }

// handshake starts server and runs the MCP handshake.
func handshake(server string) (*stdioPeer, error) {
	p, err := startPeer(server)
	if err != nil {
		return nil, err
	}
	if _, err := p.call("initialize", map[string]any{
		"protocolVersion": protocol, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2ebench-answers", "version": "1"}}); err != nil {
		p.close()
		return nil, err
	}
	if err := p.notify("notifications/initialized"); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// peerWorkspace writes the task file into a git repository of its own
// under tmp, committed, and returns the file's path.
func peerWorkspace(tmp, name string) (string, []byte, error) {
	ws := filepath.Join(tmp, name)
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return "", nil, err
	}
	src := taskFile()
	if !bytes.Contains(src, []byte(taskSearch)) {
		src = append(src, "\n"+taskSearch+"\n"...)
	}
	file := filepath.Join(ws, "list.go")
	if err := os.WriteFile(file, src, 0o600); err != nil {
		return "", nil, err
	}
	git := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.email=bench@example.invalid -c user.name=bench commit -qm base")
	git.Dir = ws
	if out, err := git.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("git: %w: %s", err, out)
	}
	return file, src, nil
}

// measurePeerAnswers runs the same calls against the official filesystem
// server (read, edit) and DesktopCommander (commands); a server given as
// "" is left out.
func measurePeerAnswers(tmp, fsServer, dcServer string) (map[string]answerViews, error) {
	out := map[string]answerViews{}
	file, src, err := peerWorkspace(tmp, "answers-peer-ws")
	if err != nil {
		return nil, err
	}
	record := func(p *stdioPeer, name, tool string, args map[string]any) error {
		line, err := p.call("tools/call", map[string]any{"name": tool, "arguments": args})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		v, err := viewsOf(line)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out[name] = v
		return nil
	}
	if fsServer != "" {
		p, err := handshake(strings.Replace(fsServer, "${ws}", shellQuote(filepath.Dir(file)), 1))
		if err != nil {
			return nil, err
		}
		defer p.close()
		if err := record(p, rowRead(bytes.Count(src, []byte("\n"))), "read_text_file", map[string]any{"path": file}); err != nil {
			return nil, err
		}
		if err := record(p, rowEdit, "edit_file", map[string]any{"path": file,
			"edits": []map[string]any{{"oldText": taskSearch, "newText": taskReplace}}}); err != nil {
			return nil, err
		}
	}
	if dcServer != "" {
		p, err := handshake(dcServer)
		if err != nil {
			return nil, err
		}
		defer p.close()
		if err := record(p, rowCommand, "start_process", map[string]any{"command": shortCommand, "timeout_ms": 5000}); err != nil {
			return nil, err
		}
		if err := record(p, rowDiff, "start_process", map[string]any{"command": "git -C " + shellQuote(filepath.Dir(file)) + " diff", "timeout_ms": 5000}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// printAnswers prints the answer-size rows of one winx, beside the peers'
// when fsServer or dcServer is set (fsServer may name its directory as
// "${ws}").
func printAnswers(tmp, server, fsServer, dcServer string) error {
	rows, err := measureAnswers(tmp, server)
	if err != nil {
		return fmt.Errorf("answer sizes: %w", err)
	}
	peers := map[string]answerViews{}
	if fsServer != "" || dcServer != "" {
		if peers, err = measurePeerAnswers(tmp, fsServer, dcServer); err != nil {
			return fmt.Errorf("peer answer sizes: %w", err)
		}
	}
	fmt.Printf("\nbytes the model receives per call (text view: the text blocks; JSON view: structuredContent, else the text)\n")
	fmt.Printf("%-30s %18s %18s\n", "call", "text: winx/peer", "JSON: winx/peer")
	ratio := func(a, b int) string {
		if b == 0 {
			return fmt.Sprintf("%d", a)
		}
		return fmt.Sprintf("%d/%d=%.2fx", a, b, float64(a)/float64(b))
	}
	for _, r := range rows {
		pv := peers[r.name]
		fmt.Printf("%-30s %18s %18s\n", r.name, ratio(r.views.text, pv.text), ratio(r.views.json, pv.json))
	}
	return nil
}

// sessionOf reads the thread id and workspace root of an Initialize answer
// (a JSON-RPC response line).
func sessionOf(line []byte) (tid, root string, err error) {
	var init struct {
		Result struct {
			Structured struct {
				Data struct {
					ThreadID      string `json:"thread_id"`
					WorkspaceRoot string `json:"workspace_root"`
				} `json:"data"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &init); err != nil || init.Result.Structured.Data.ThreadID == "" {
		return "", "", fmt.Errorf("Initialize answered %.300s", line)
	}
	d := init.Result.Structured.Data
	return d.ThreadID, d.WorkspaceRoot, nil
}
