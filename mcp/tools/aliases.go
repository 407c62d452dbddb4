package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace" // "workspace" names a test helper of this package
)

// The hidden legacy aliases: callable by name for agents trained on older
// Winx/WCGW catalogs, never listed. Each lowers into the EditFiles engine
// with the same session, path policy and read coverage, so an alias can
// never do more than EditFiles could under the caller's profile (the
// registry only dispatches an alias the profile allows, and EditFiles'
// rules apply inside).

// Alias names.
const (
	FileWriteOrEditTool = "FileWriteOrEdit"
	MultiFileEditTool   = "MultiFileEdit"
	ApplyPatchTool      = "ApplyPatch"
	UndoEditTool        = "UndoEdit"
)

// maxPatchBytes bounds an ApplyPatch diff.
const maxPatchBytes = 4 << 20

const aliasBinding = `"thread_id": {"type": "string", "minLength": 1}, "workspace_root": {"type": "string"}`

func addEditAliases(reg *mcp.Registry, t *editTool) {
	add := func(name, desc, props string, required []string, lower func(json.RawMessage) (*editInput, error)) {
		req, _ := json.Marshal(append(required, "thread_id"))
		schema := `{"type":"object","properties":{` + props + `,` + aliasBinding + `},"required":` + string(req) + `,"additionalProperties":false}`
		reg.AddTool(mcp.Tool{
			Name: name, Description: desc, InputSchema: json.RawMessage(schema), OutputSchema: mcp.EnvelopeOutputSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Bool(false), DestructiveHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(true)},
			Hidden:      true,
		}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
			in, err := lower(req.Arguments)
			if err != nil {
				return toolFailure(EditFilesTool, err), nil
			}
			if in.WorkspaceRoot == "" && in.ThreadID != "" {
				// Older agents send only thread_id; the thread names its workspace.
				if sess, err := t.sessions.ByThread(req.Caller().Principal, in.ThreadID); err == nil {
					in.WorkspaceRoot = sess.Root
				} else if rec, ok := session.RecallThread(wspace.PrincipalStateDir(t.stateDir, req.Caller().Principal), in.ThreadID); ok {
					in.WorkspaceRoot = rec.Root // bound by an earlier adapter; reattached if it runs
				}
			}
			return t.apply(ctx, req.Caller(), in), nil
		})
	}
	add(FileWriteOrEditTool, "Legacy alias of EditFiles: write a whole file, or apply SEARCH/REPLACE blocks to it.",
		`"file_path": {"type": "string", "minLength": 1}, "percentage_to_change": {"type": "number"}, "file_content_or_search_replace_blocks": {"type": "string"}, "text_or_search_replace_blocks": {"type": "string"}`,
		[]string{"file_path"}, lowerFileWriteOrEdit)
	add(MultiFileEditTool, "Legacy alias of EditFiles: several FileWriteOrEdit entries in one atomic batch.",
		`"files": {"type": "array", "minItems": 1, "maxItems": 100, "items": {"type": "object", "properties": {"file_path": {"type": "string"}, "file_content_or_search_replace_blocks": {"type": "string"}}, "required": ["file_path", "file_content_or_search_replace_blocks"], "additionalProperties": false}}`,
		[]string{"files"}, lowerMultiFileEdit)
	add(ApplyPatchTool, "Legacy alias of EditFiles: apply a unified diff; every hunk must match the file it names.",
		`"patch": {"type": "string", "minLength": 1}`, []string{"patch"}, lowerApplyPatch)
	add(UndoEditTool, "Legacy alias of EditFiles undo: restore a file to before an edit, if it has not changed since.",
		`"undo_id": {"type": "string", "minLength": 1}`, []string{"undo_id"}, lowerUndoEdit)
}

type aliasBindingFields struct {
	ThreadID      string `json:"thread_id"`
	WorkspaceRoot string `json:"workspace_root"`
}

// contentEntry turns FileWriteOrEdit's payload into one EditFiles entry:
// SEARCH blocks mean search_replace, anything else the whole new content
// (the rule of inferEditMode).
func contentEntry(path, content string) editFileInput {
	e := editFileInput{FilePath: path, Content: &content}
	e.Mode = inferEditMode(e)
	return e
}

func lowerFileWriteOrEdit(raw json.RawMessage) (*editInput, error) {
	var in struct {
		aliasBindingFields
		FilePath           string   `json:"file_path"`
		PercentageToChange *float64 `json:"percentage_to_change"`
		Content            *string  `json:"file_content_or_search_replace_blocks"`
		Text               *string  `json:"text_or_search_replace_blocks"`
	}
	if err := decodeArguments(raw, &in); err != nil {
		return nil, err
	}
	content := in.Content
	if content == nil {
		content = in.Text
	}
	if content == nil {
		return nil, &InputError{Msg: "file_content_or_search_replace_blocks is required"}
	}
	return &editInput{Files: []editFileInput{contentEntry(in.FilePath, *content)},
		ThreadID: in.ThreadID, WorkspaceRoot: in.WorkspaceRoot}, nil
}

func lowerMultiFileEdit(raw json.RawMessage) (*editInput, error) {
	var in struct {
		aliasBindingFields
		Files []struct {
			FilePath string `json:"file_path"`
			Content  string `json:"file_content_or_search_replace_blocks"`
		} `json:"files"`
	}
	if err := decodeArguments(raw, &in); err != nil {
		return nil, err
	}
	out := &editInput{ThreadID: in.ThreadID, WorkspaceRoot: in.WorkspaceRoot}
	for _, f := range in.Files {
		out.Files = append(out.Files, contentEntry(f.FilePath, f.Content))
	}
	return out, nil
}

func lowerUndoEdit(raw json.RawMessage) (*editInput, error) {
	var in struct {
		aliasBindingFields
		UndoID string `json:"undo_id"`
	}
	if err := decodeArguments(raw, &in); err != nil {
		return nil, err
	}
	return &editInput{Operation: "undo", Files: []editFileInput{{UndoID: in.UndoID}},
		ThreadID: in.ThreadID, WorkspaceRoot: in.WorkspaceRoot}, nil
}

func lowerApplyPatch(raw json.RawMessage) (*editInput, error) {
	var in struct {
		aliasBindingFields
		Patch string `json:"patch"`
	}
	if err := decodeArguments(raw, &in); err != nil {
		return nil, err
	}
	if len(in.Patch) > maxPatchBytes {
		return nil, &InputError{Msg: fmt.Sprintf("patch is larger than %d bytes", maxPatchBytes)}
	}
	files, err := unifiedDiffToBlocks(in.Patch)
	if err != nil {
		return nil, err
	}
	out := &editInput{ThreadID: in.ThreadID, WorkspaceRoot: in.WorkspaceRoot}
	for _, f := range files {
		content := f.blocks
		out.Files = append(out.Files, editFileInput{FilePath: f.path, Mode: "search_replace", Content: &content})
	}
	return out, nil
}

type patchedFile struct {
	path   string
	blocks string
}

// unifiedDiffToBlocks turns each hunk of a unified diff into an anchored
// SEARCH/REPLACE block (context and removed lines are searched, context and
// added lines replace them), so every hunk is verified against the file by
// the matcher instead of trusting its line numbers. Hunks without context or
// removed lines (new files, pure insertions at an unknown place) cannot be
// verified that way and are refused by the block parser as empty SEARCH;
// EditFiles replace or line_patch serve those.
func unifiedDiffToBlocks(diff string) ([]patchedFile, error) {
	var files []patchedFile
	var cur *patchedFile
	var search, replace strings.Builder
	inHunk, anchor := false, 0
	flush := func() {
		if inHunk && cur != nil {
			cur.blocks += fmt.Sprintf("<<<<<<< SEARCH @%d\n%s=======\n%s>>>>>>> REPLACE\n", anchor, search.String(), replace.String())
		}
		search.Reset()
		replace.Reset()
		inHunk = false
	}
	sc := bufio.NewScanner(strings.NewReader(diff))
	sc.Buffer(make([]byte, 64<<10), maxPatchBytes)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "--- "):
			flush()
		case strings.HasPrefix(line, "+++ "):
			flush()
			path := strings.TrimSpace(strings.TrimPrefix(line, "+++ "))
			if i := strings.IndexByte(path, '\t'); i >= 0 {
				path = path[:i]
			}
			if path == "/dev/null" {
				return nil, &InputError{Msg: "ApplyPatch cannot delete files"}
			}
			path = strings.TrimPrefix(strings.TrimPrefix(path, "b/"), "./")
			files = append(files, patchedFile{path: path})
			cur = &files[len(files)-1]
		case strings.HasPrefix(line, "@@"):
			flush()
			if cur == nil {
				return nil, &InputError{Msg: fmt.Sprintf("patch line %d: hunk before a +++ header", lineNo)}
			}
			n, ok := hunkStart(line)
			if !ok {
				return nil, &InputError{Msg: fmt.Sprintf("patch line %d: malformed hunk header", lineNo)}
			}
			inHunk, anchor = true, n
		case inHunk && strings.HasPrefix(line, " "):
			search.WriteString(line[1:] + "\n")
			replace.WriteString(line[1:] + "\n")
		case inHunk && strings.HasPrefix(line, "-"):
			search.WriteString(line[1:] + "\n")
		case inHunk && strings.HasPrefix(line, "+"):
			replace.WriteString(line[1:] + "\n")
		case inHunk && line == "":
			search.WriteString("\n")
			replace.WriteString("\n")
		case strings.HasPrefix(line, `\ No newline`), strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "index "):
		default:
			if inHunk {
				return nil, &InputError{Msg: fmt.Sprintf("patch line %d: unexpected line in a hunk", lineNo)}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &InputError{Msg: "patch: " + err.Error()}
	}
	flush()
	if len(files) == 0 {
		return nil, &InputError{Msg: "patch names no file (+++ header)"}
	}
	for _, f := range files {
		if f.blocks == "" {
			return nil, &InputError{Msg: "patch for " + f.path + " has no hunk"}
		}
	}
	return files, nil
}

// hunkStart reads the old-file start line of "@@ -A,B +C,D @@".
func hunkStart(header string) (int, bool) {
	rest, ok := strings.CutPrefix(header, "@@ -")
	if !ok {
		return 0, false
	}
	end := strings.IndexAny(rest, ", ")
	if end < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil || n < 0 {
		return 0, false
	}
	return max(n, 1), true
}
