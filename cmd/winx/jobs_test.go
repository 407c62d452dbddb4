package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"winx/guardian"
	"winx/guardian/wire/hermetic"
)

// jobsOf runs BashCommand jobs and returns its jobs by id.
func jobsOf(t *testing.T, a *adapter, s initData) (daemonToolResult, map[string]guardian.Job) {
	t.Helper()
	r := a.bash(s, map[string]any{"type": "jobs"}, 0)
	var d struct {
		Jobs []guardian.Job `json:"jobs"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatalf("jobs data %s: %v (%+v)", r.Data, err, r)
	}
	m := map[string]guardian.Job{}
	for _, j := range d.Jobs {
		m[j.ID] = j
	}
	return r, m
}

// TestDaemonJobsAcrossAdaptersAndLost: a background job started by one
// adapter is listed and read by the next adapter of the workspace; once
// its guardian is killed, `winx jobs` and the session's next guardian
// report it lost.
func TestDaemonJobsAcrossAdaptersAndLost(t *testing.T) {
	d := newDaemonEnv(t)
	root := t.TempDir()
	mark := strconv.FormatInt(time.Now().UnixNano(), 36)
	a := d.adapter()
	s := a.mustInit(root)
	r := a.bash(s, map[string]any{"type": "command", "command": "echo started-" + mark + "; sleep 60", "is_background": true}, 0)
	var started struct {
		BgCommandID string `json:"bg_command_id"`
	}
	if err := json.Unmarshal(r.Data, &started); err != nil || started.BgCommandID == "" {
		t.Fatalf("background start = %+v (%v)", r, err)
	}
	id := started.BgCommandID
	a.kill() // the first adapter is gone

	b := d.adapter()
	s2 := b.mustInit(root)
	r, jobs := jobsOf(t, b, s2)
	if j := jobs[id]; j.State != guardian.JobRunning || !strings.Contains(j.Command, "started-"+mark) {
		t.Fatalf("jobs from the second adapter = %+v (%s), want %s running", jobs, r.Output, id)
	}
	if !strings.Contains(r.Output, id+"\trunning\t-\t") {
		t.Errorf("jobs text = %q, want a row of %s running", r.Output, id)
	}
	var out strings.Builder
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "started-"+mark) && time.Now().Before(deadline) {
		out.WriteString(b.bash(s2, map[string]any{"type": "status_check", "bg_command_id": id}, 2).Output)
	}
	if !strings.Contains(out.String(), "started-"+mark) {
		t.Fatalf("status_check of %s from the second adapter = %q, want started-%s", id, out.String(), mark)
	}

	l := d.list()
	if len(l) != 1 {
		t.Fatalf("winx list = %+v, want one session", l)
	}
	hermetic.Kill(l[0].PID, false)
	if !waitGone(l[0].PID, 20*time.Second) {
		t.Fatalf("guardian %d outlived SIGKILL", l[0].PID)
	}
	for _, args := range [][]string{{"jobs"}, {"jobs", s2.ThreadID}} {
		text, err := d.winx(args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, id) || !strings.Contains(text, " lost ") || !strings.Contains(text, "is gone") {
			t.Errorf("winx %s after the guardian was killed:\n%s\nwant %s lost", strings.Join(args, " "), text, id)
		}
	}
	// As attach and kill: a name no session matches is an error.
	if text, err := d.winx("jobs", "no-such-thread"); err == nil || !strings.Contains(err.Error(), `no session matches "no-such-thread"`) || strings.Contains(text, id) {
		t.Errorf("winx jobs no-such-thread = %q, %v; want no jobs and no session matches", text, err)
	}

	// The killed session is reported lost, and the reset's fresh shell
	// is the one that replaced it.
	rr := b.tool("Initialize", map[string]any{"type": "reset_shell", "any_workspace_path": root})
	var s3 initData
	if rr.ErrorCode != "initialize_recovered_missing_session" || json.Unmarshal(rr.Data, &s3) != nil || s3.ShellPID == 0 {
		t.Fatalf("reset_shell after the guardian was killed = %+v, want initialize_recovered_missing_session", rr)
	}
	r, jobs = jobsOf(t, b, s3)
	if j := jobs[id]; j.State != guardian.JobLost {
		t.Errorf("jobs after reset_shell = %+v (%s), want %s lost", jobs, r.Output, id)
	}
	if !strings.Contains(r.Output, id+"\tlost\t") || !strings.Contains(r.Output, "output went with it") {
		t.Errorf("jobs text after reset_shell = %q, want %s lost and the note", r.Output, id)
	}
}
