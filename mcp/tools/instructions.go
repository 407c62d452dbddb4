package tools

import (
	"context"
	"fmt"
	"strings"

	"winx/mcp"
)

// builtinInstructions is the working contract every client gets in the
// handshake (initialize / server/discover). It is short on purpose: models
// read it on every connection.
const builtinInstructions = `Winx gives you a durable shell and guarded file access on the user's machine.
Working contract:
1. Call Initialize once per workspace (type first_call, any_workspace_path = the project). Keep the pair it returns, thread_id and workspace_root, and pass both unchanged to every later call; do not call Initialize again unless the shell is stuck (reset_shell) or the user asked for another mode or workspace.
2. Read before you edit: EditFiles only changes lines that ReadFiles showed you at the file's current revision; when it answers needs_read, read exactly the requiredReads ranges and retry.
3. Prefer line_patch edits (by line number and revision) over search/replace; they are exact and cheap.
4. Never repeat a rejected call unchanged (retrySameCall is always false): read status, errorCode and nextAction, fix the call, then retry. A running command answers status running; poll it with a status_check instead of starting it again.
5. Put scratch files in the session's temporary_artifact_dir, not in the project.
Read the resource ` + AboutURI + ` for this server's build and capabilities.`

// operatorHeading introduces the operator's instructions wherever they are
// repeated.
const operatorHeading = "Instructions from the operator of this server:\n"

// Instructions returns the handshake instructions: the built-in working
// contract followed by the operator's own (WINX_SERVER_INSTRUCTIONS), if any.
func Instructions(operator string) string {
	operator = strings.TrimSpace(operator)
	if operator == "" {
		return builtinInstructions
	}
	return builtinInstructions + "\n\n" + operatorHeading + operator
}

// writeOperatorInstructions repeats the operator's instructions in a new
// session's Initialize answer, for clients that do not show the handshake
// instructions to the model.
func (t *initializer) writeOperatorInstructions(b *strings.Builder) {
	if s := strings.TrimSpace(t.serverInstructions); s != "" {
		b.WriteString("\n" + operatorHeading + s + "\n")
	}
}

// HandoverPrompt asks the model to hand its task over with ContextSave.
const HandoverPrompt = "winx_handover"

func addHandoverPrompt(reg *mcp.Registry) {
	reg.AddPrompt(mcp.Prompt{
		Name:        HandoverPrompt,
		Title:       "Hand over this task",
		Description: "Save the task's state with ContextSave so that a later session or another agent can resume it with Initialize task_id_to_resume.",
		Arguments: []mcp.PromptArgument{
			{Name: "task_id", Description: "Id to save the task under (letters, digits, '_', '-', '.'); empty lets the server choose."},
			{Name: "note", Description: "Anything the user wants the handover to stress."},
		},
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "Hand over with ContextSave",
			Messages: []mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: handoverText(req.Arguments["task_id"], req.Arguments["note"])},
			}},
		}, nil
	}, nil)
}

func handoverText(taskID, note string) string {
	var b strings.Builder
	b.WriteString("Stop working on the task and hand it over now. Call ContextSave once, with the thread_id and workspace_root of this session")
	if taskID = strings.TrimSpace(taskID); taskID != "" {
		fmt.Fprintf(&b, ", id %q", taskID)
	}
	b.WriteString(`, and:
- description: the goal in the user's words; what is done (with file paths); what is left, in order; decisions taken and why; commands that build and test the project; anything that failed and how.
- relevant_file_globs: the files you changed or that the next agent must read first (globs relative to the project root).
Do not change any file while handing over. Then answer with the saved id and tell the user that Initialize with task_id_to_resume set to it restores the task.`)
	if note = strings.TrimSpace(note); note != "" {
		b.WriteString("\nThe user adds: " + note)
	}
	return b.String()
}
