package tools

import (
	"fmt"
	"strings"
	"time"

	"winx/guardian"
	"winx/mcp"
)

// jobs answers a jobs action: a compact table (id, state, code, age,
// command) with the jobs in data, and a status_check of the newest running
// one as the next action.
func (r *bashRun) jobs(jobs []guardian.Job, now time.Time) *mcp.CallToolResult {
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: BashCommandTool, Data: bashData{Jobs: jobs}}
	if len(jobs) == 0 {
		env.Message = "No background jobs."
		return env.Result("No background jobs; start one with is_background true.")
	}
	var b strings.Builder
	b.WriteString(strings.ToLower(guardian.JobTableHeader) + "\n")
	running, lost := "", 0
	for _, j := range jobs {
		b.WriteString(guardian.JobRow(j, now) + "\n")
		switch j.State {
		case guardian.JobRunning:
			running = j.ID
		case guardian.JobLost:
			lost++
		}
	}
	env.Message = fmt.Sprintf("%d background jobs.", len(jobs))
	if lost > 0 {
		b.WriteString("lost: the session's guardian died while the job ran; its output went with it.\n")
	}
	if running != "" {
		r.act.BgCommandID = running
		env.NextAction = r.statusCheck("Check on the running background job.")
	}
	return env.Result(strings.TrimSuffix(b.String(), "\n"))
}
