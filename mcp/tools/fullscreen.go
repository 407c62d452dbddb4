package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"winx/guardian"
	"winx/mcp"
)

// A full-screen program (a pager, an editor, top) draws on the terminal's
// alternate screen and reads keys, not lines: what it printed is no
// output to deliver and it waits for no answer. Its answer is the screen
// it shows and the keys that drive it, so the agent needs no screen call
// to see it and no guess at what to type.

// fullScreen returns the visible screen of the session's shell terminal
// when a program holds it on the alternate screen, with the trailing
// blank rows left out; ok is false otherwise. Only the shell's own
// terminal has a screen here: a background command's PTY is not rendered.
//
// It looks only when the command reads its terminal or printed nothing
// new (what a program draws on the alternate screen is no output: less
// reads, vi waits in select and shows as silent). A screen snapshot is also
// the base of the next screen diff, which must stay what the model last
// saw; with no new output the screen has not moved since the last answer.
func (r *bashRun) fullScreen(ctx context.Context, o *guardian.Outcome) (rows []string, ok bool) {
	if !o.Running || r.act.BgCommandID != "" || !o.AwaitingInput && strings.TrimSpace(o.Output.Text) != "" {
		return nil, false
	}
	snap := r.term.Screen(ctx, 0, false)
	if !snap.AltScreen {
		return nil, false
	}
	rows = snap.Rows
	for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
		rows = rows[:len(rows)-1]
	}
	return rows, true
}

// programKeys are the keys that leave well-known full-screen programs,
// by program name: the next action of their screen.
var programKeys = []struct {
	names []string
	// text is typed with send_text; submit adds Enter.
	text   string
	submit bool
	how    string
}{
	{[]string{"less", "more", "most", "man", "journalctl", "top", "htop", "btop", "atop", "watch"}, "q", false, "q quits %s"},
	{[]string{"vi", "vim", "nvim", "view", "vimdiff", "ex"}, "\x1b:q!", true, "Escape :q! Enter quits %s without saving (:wq saves)"},
	{[]string{"nano", "pico"}, "\x18", false, "Ctrl-X leaves %s (it asks before discarding changes)"},
	{[]string{"emacs"}, "\x18\x03", false, "Ctrl-X Ctrl-C leaves %s (it asks before discarding changes)"},
}

// programName is the program a command line leaves in the foreground: in
// its last pipeline stage or list element (`seq 9 | less`, `cd d && vi
// f`), the first word that is not a variable assignment, sudo or env, as a
// base name. It only picks the keys offered; a wrong guess costs a screen.
func programName(command string) string {
	last := command
	if i := strings.LastIndexAny(command, "|;&\n"); i >= 0 {
		last = command[i+1:]
	}
	for _, w := range strings.Fields(last) {
		if strings.Contains(w, "=") || w == "sudo" || w == "env" || w == "command" || w == "exec" {
			continue
		}
		return filepath.Base(w)
	}
	return ""
}

// fullScreenNext is the next action for a full-screen program's screen:
// the keys that leave a known program, else a look at the screen.
func (r *bashRun) fullScreenNext(command string) *mcp.NextAction {
	prog := programName(command)
	for _, p := range programKeys {
		for _, n := range p.names {
			if n != prog {
				continue
			}
			act := map[string]any{"type": actSendText, "send_text": p.text}
			if p.submit {
				act["submit"] = true
			}
			return &mcp.NextAction{Tool: BashCommandTool,
				Instruction: fmt.Sprintf(p.how, prog) + "; other keys drive it (send_text, send_specials for arrows), and each answer shows the screen again.",
				Arguments:   map[string]any{"action_json": act, "thread_id": r.threadID, "workspace_root": r.root}}
		}
	}
	return &mcp.NextAction{Tool: BashCommandTool,
		Instruction: "Type the program's keys with send_text or send_specials (each answer shows the screen again); take a screen when it changes by itself.",
		Arguments:   map[string]any{"action_json": map[string]any{"type": actScreen}, "thread_id": r.threadID, "workspace_root": r.root}}
}
