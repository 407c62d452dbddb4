package tools

import (
	"fmt"
	"strings"

	"winx/evidence/redact"
	"winx/guardian"
	"winx/mcp"
	"winx/mcp/session"
)

// A session whose shell was lost (its guardian died) is never answered as
// "reattached": the registry replaces the shell (session.Sessions.Revive)
// and the next answer about the session says what was lost, in this shape:
// one line saying what happened and what was started instead, then the
// lost command, the journal and its last lines. The journal is kept under
// the state directory, where only the session's principal may read it with
// ReadFiles (session.Session.LostJournal): it is the session's own output,
// and a ReadFiles of one path needs no shell, so it works in every mode,
// architect included, and shows the lines with the usual budget and
// redaction.

// maxLostTextLines bounds the journal lines an answer shows.
const maxLostTextLines = 20

// lostData is data.lost of an answer about a lost session.
type lostData struct {
	// Command is the command that was running, or the last one known;
	// "unknown" when neither is.
	Command        string         `json:"command"`
	CommandRunning bool           `json:"command_running,omitempty"`
	ShellPID       int            `json:"shell_pid,omitempty"`
	Journal        string         `json:"journal,omitempty"`
	JournalLines   int            `json:"journal_lines,omitempty"`
	LastLines      []string       `json:"last_lines,omitempty"`
	Jobs           []guardian.Job `json:"jobs,omitempty"`
}

// lostSummary is the one line of what happened: the session at root lost
// its shell and a fresh one runs in its place.
func lostSummary(root string, rep session.LostReport) string {
	pid := ""
	if rep.PID > 0 {
		pid = fmt.Sprintf(" (PID %d)", rep.PID)
	}
	return fmt.Sprintf("The session's shell%s was lost (its guardian process died or was ended); a fresh shell was started in %s with the same mode: its cwd, variables and running commands are gone.", pid, root)
}

// lostBlock renders the report after the summary: the command, the
// journal and its last lines (redacted), the jobs; it returns the data and
// the next action (reading the journal), nil when no journal is left.
func lostBlock(b *strings.Builder, rep session.LostReport, red *redact.Redactor, threadID, root string) (lostData, *mcp.NextAction) {
	d := lostData{Command: rep.Command, CommandRunning: rep.CommandRunning, ShellPID: rep.PID, Journal: rep.Journal, JournalLines: rep.Lines}
	if d.Command == "" {
		d.Command = "unknown"
	}
	clean := func(s string) string {
		out, _ := red.String(s)
		return out
	}
	d.Command = clean(d.Command)
	switch {
	case rep.CommandRunning:
		fmt.Fprintf(b, "Lost command (it was running): %s\n", d.Command)
	case rep.Command != "":
		fmt.Fprintf(b, "Last command (it had ended): %s\n", d.Command)
	default:
		b.WriteString("Lost command: unknown\n")
	}
	var next *mcp.NextAction
	if rep.Journal != "" {
		fmt.Fprintf(b, "journal: %s (%d lines)\n", rep.Journal, rep.Lines)
		last := rep.Last
		if len(last) > maxLostTextLines {
			last = last[len(last)-maxLostTextLines:]
		}
		if len(last) > 0 {
			fmt.Fprintf(b, "Its last %d lines:\n", len(last))
			for _, l := range last {
				l = clean(l)
				d.LastLines = append(d.LastLines, l)
				b.WriteString("  " + l + "\n")
			}
		}
		next = &mcp.NextAction{Tool: ReadFilesTool, Instruction: "Read the lost session's journal to see what its command printed.",
			Arguments: map[string]any{"file_paths": []string{rep.Journal}, "thread_id": threadID, "workspace_root": root}}
	} else {
		b.WriteString("journal: none is left (no foreground output was found; an ended guardian removes its files)\n")
	}
	d.Jobs = make([]guardian.Job, 0, len(rep.Jobs))
	for _, j := range rep.Jobs {
		j.Command = clean(j.Command)
		d.Jobs = append(d.Jobs, j)
		fmt.Fprintf(b, "Background job %s (%s): %s\n", j.ID, j.State, j.Command)
	}
	return d, next
}
