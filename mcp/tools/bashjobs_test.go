package tools

import (
	"strings"
	"testing"

	"winx/guardian"
)

// BashCommand jobs lists the background jobs while a foreground command
// runs: a table, the jobs in data, and a status_check of the running one.
func TestBashCommandJobs(t *testing.T) {
	e := newBashEnv(t, "")
	r, _ := e.bash(map[string]any{"type": "jobs"}, 0)
	if r.IsError || r.Structured.Status != "completed" || !strings.Contains(r.Structured.Output, "No background jobs") {
		t.Fatalf("jobs without any = %+v", r.Structured)
	}
	_, exited := e.bash(map[string]any{"type": "command", "command": "exit 4", "is_background": true}, 0)
	_, running := e.bash(map[string]any{"type": "command", "command": "sleep 60", "is_background": true}, 0)
	if r, _ := e.bash(map[string]any{"type": "status_check", "bg_command_id": exited.BgCommandID}, 20); r.Structured.Status != "completed" {
		t.Fatalf("status_check of %s = %+v", exited.BgCommandID, r.Structured)
	}
	if r, _ := e.bash(cmd("sleep 30"), 0.2); r.Structured.Status != "running" {
		t.Fatalf("foreground sleep = %+v", r.Structured)
	}
	r, d := e.bash(map[string]any{"type": "jobs"}, 0)
	if r.IsError || r.Structured.Status != "completed" || len(d.Jobs) != 2 {
		t.Fatalf("jobs = %+v (%+v)", r.Structured, d.Jobs)
	}
	if j := d.Jobs[0]; j.ID != exited.BgCommandID || j.State != guardian.JobExited || j.ExitCode != 4 {
		t.Errorf("jobs[0] = %+v, want %s exited 4", j, exited.BgCommandID)
	}
	if j := d.Jobs[1]; j.ID != running.BgCommandID || j.State != guardian.JobRunning {
		t.Errorf("jobs[1] = %+v, want %s running", j, running.BgCommandID)
	}
	text := r.Structured.Output
	for _, want := range []string{"id\tstate\tcode\tage\tcommand", exited.BgCommandID + "\texited\t4\t", running.BgCommandID + "\trunning\t-\t", "sleep 60"} {
		if !strings.Contains(text, want) {
			t.Errorf("jobs text %q lacks %q", text, want)
		}
	}
	na := r.Structured.NextAction
	if na == nil {
		t.Fatalf("jobs with a running job has no nextAction")
	}
	act, _ := na.Arguments["action_json"].(map[string]any)
	if act["type"] != "status_check" || act["bg_command_id"] != running.BgCommandID {
		t.Errorf("jobs nextAction = %+v, want a status_check of %s", na, running.BgCommandID)
	}
}
