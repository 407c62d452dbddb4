package tools

import (
	"fmt"
	"io"
	"os"
	"strings"

	"winx/codemap"
	"winx/edit"
	"winx/evidence"
	"winx/mcp"
)

// codeSyntaxErrorIntroduced: an edit was applied and left a file that parsed
// before no longer parsing.
const codeSyntaxErrorIntroduced = "syntax_error_introduced"

// syntaxReadContext is how many lines around a syntax error the suggested
// ReadFiles shows on each side.
const syntaxReadContext = 5

// syntaxCheck remembers, between planning and committing an edit batch,
// which targets parsed cleanly before the edit. Only those can have an
// error "introduced": a file that was already broken gets no warning, so a
// model repairing it step by step is not nagged. A nil *syntaxCheck checks
// nothing (a build without cgo, or no target codemap parses).
type syntaxCheck struct {
	clean map[string]bool // canonical path: parsed without error before the edit
}

// syntaxWarning is one entry of data.syntax_warnings.
type syntaxWarning struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Snippet string `json:"snippet"`
}

// syntaxBaseline parses the current bytes of every planned target whose
// language codemap knows. A file that changed since planning (its bytes no
// longer match the planned old revision) is left out: Commit will refuse
// it anyway. A file the plan creates counts as clean.
func syntaxBaseline(plan *edit.Plan) *syntaxCheck {
	if !codemap.Available() {
		return nil
	}
	c := &syntaxCheck{clean: map[string]bool{}}
	for _, f := range plan.Files {
		if _, ok := codemap.LanguageOf(f.Path); !ok {
			continue
		}
		if !f.Exists {
			c.clean[f.Path] = true
			continue
		}
		src, ok := readForSyntax(f.Path, f.OldRev)
		if !ok {
			continue
		}
		if issue, err := codemap.FirstSyntaxError(f.Path, src); err == nil && issue == nil {
			c.clean[f.Path] = true
		}
	}
	if len(c.clean) == 0 {
		return nil
	}
	return c
}

// readForSyntax reads path, bounded by what codemap parses, and returns
// its bytes only if they are at revision want.
func readForSyntax(path string, want evidence.Revision) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, codemap.MaxSourceBytes+1))
	if err != nil || len(src) > codemap.MaxSourceBytes || evidence.RevisionOf(src) != want {
		return nil, false
	}
	return src, true
}

// warnings parses each committed file that was clean before the edit and
// returns the files that no longer parse.
func (c *syntaxCheck) warnings(res *edit.Result) []syntaxWarning {
	var out []syntaxWarning
	for _, f := range res.Files {
		if !c.clean[f.Path] || f.Replayed || f.Removed {
			continue
		}
		src, ok := readForSyntax(f.Path, f.NewRevision)
		if !ok {
			continue
		}
		if issue, err := codemap.FirstSyntaxError(f.Path, src); err == nil && issue != nil {
			out = append(out, syntaxWarning{Path: f.Path, Line: issue.Line, Column: issue.Column, Snippet: issue.Snippet})
		}
	}
	return out
}

// syntaxData is the edit's data with the warnings beside its fields.
type syntaxData struct {
	*editData
	SyntaxWarnings []syntaxWarning `json:"syntax_warnings"`
}

// annotate adds the syntax warnings of res to an EditFiles result. The edit
// stays applied; the status becomes completed_with_issues unless a failed
// verify_command already made it so (its errorCode then stands, the
// message names the syntax error too).
func (c *syntaxCheck) annotate(r *mcp.CallToolResult, res *edit.Result, in *editInput) *mcp.CallToolResult {
	if c == nil || r == nil {
		return r
	}
	env, ok := r.StructuredContent.(mcp.Envelope)
	data, isEdit := env.Data.(*editData)
	if !ok || !isEdit || env.Status != mcp.StatusCompleted && env.Status != mcp.StatusCompletedWithIssues {
		return r
	}
	ws := c.warnings(res)
	if len(ws) == 0 {
		return r
	}
	var places []string
	var text strings.Builder
	for _, w := range ws {
		places = append(places, fmt.Sprintf("%s line %d", w.Path, w.Line))
		fmt.Fprintf(&text, "warning: %s:%d:%d no longer parses (the edit introduced a syntax error): %s\n", w.Path, w.Line, w.Column, w.Snippet)
	}
	summary := "a syntax error is introduced at " + strings.Join(places, ", ")
	env.Data = syntaxData{editData: data, SyntaxWarnings: ws}
	if env.Status == mcp.StatusCompleted {
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusCompletedWithIssues, codeSyntaxErrorIntroduced, true
		env.Message = "The edit was applied, but " + summary + "; fix it with another edit."
	} else {
		env.Message += " Also, " + summary + "."
	}
	if env.NextAction == nil {
		w := ws[0]
		env.NextAction = &mcp.NextAction{Tool: ReadFilesTool, Instruction: "Read the lines around the syntax error, then fix them; the edit is already applied.",
			Arguments: map[string]any{"file_paths": []string{fmt.Sprintf("%s:%d-%d", w.Path, max(1, w.Line-syntaxReadContext), w.Line+syntaxReadContext)},
				"thread_id": in.ThreadID, "workspace_root": in.WorkspaceRoot}}
	}
	return env.Result(strings.TrimRight(text.String()+env.Body(), "\n"))
}
