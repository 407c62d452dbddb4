package guardian

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// JobState is what became of a background command.
type JobState string

// The states of a job.
const (
	// JobRunning: the command still runs.
	JobRunning JobState = "running"
	// JobExited: the command ended; Job.ExitCode is its code.
	JobExited JobState = "exited"
	// JobLost: the process serving the session (its guardian) died while
	// the command ran; what became of it is unknown, and its output went
	// with the guardian's private directory.
	JobLost JobState = "lost"
)

// MaxJobCommandBytes bounds the command text a Job carries.
const MaxJobCommandBytes = 200

// Job is one background command as Terminal.Jobs lists it.
type Job struct {
	// ID is the command's bg_command_id.
	ID string `json:"id"`
	// Command is the command line, redacted by the session's redactor and
	// cut to MaxJobCommandBytes.
	Command string   `json:"command"`
	State   JobState `json:"state"`
	// ExitCode is the command's code when State is JobExited (128 plus the
	// signal number for a command a signal ended); 0 otherwise.
	ExitCode int       `json:"exit_code"`
	Started  time.Time `json:"started"`
	// Ended is when the command exited; zero while it runs and for a lost
	// job (nobody saw it end).
	Ended time.Time `json:"ended,omitzero"`
	// OutputBytes counts the rendered output lines kept so far.
	OutputBytes int64 `json:"output_bytes"`
	// Journal is the file the command's output streams to ("" when it
	// could not be created). A lost job's journal is gone with its
	// guardian's private directory.
	Journal string `json:"journal,omitempty"`
}

// Lost returns j as a job whose guardian died: a running job becomes lost,
// a finished one stays as it was.
func (j Job) Lost() Job {
	if j.State == JobRunning {
		j.State, j.ExitCode, j.Ended = JobLost, 0, time.Time{}
	}
	return j
}

// Jobs lists the session's background commands, oldest first: those
// running, those that ended (until pruned, see MaxBackground), and the
// jobs of a previous process of this session (Options.PriorJobs). It needs
// no foreground shell: it answers while a command runs.
func (s *Shell) Jobs(context.Context) ([]Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobsLocked(), nil
}

func (s *Shell) jobsLocked() []Job {
	jobs := make([]Job, 0, len(s.prior)+len(s.bg))
	jobs = append(jobs, s.prior...)
	for _, b := range s.bg {
		jobs = append(jobs, s.jobLocked(b))
	}
	slices.SortStableFunc(jobs, func(a, b Job) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return jobNumber(a.ID) - jobNumber(b.ID)
	})
	return jobs
}

func (s *Shell) jobLocked(b *background) Job {
	c := b.cmd
	j := Job{ID: b.id, Command: b.shown, State: JobRunning, Started: c.started, OutputBytes: c.out.bytes, Journal: c.out.path}
	if c.done {
		j.State, j.ExitCode, j.Ended = JobExited, c.exitCode, c.finished
	}
	return j
}

// jobCommand is command as a Job shows it: redacted whole (a cut first
// could leave half a secret unrecognised), then cut.
func (s *Shell) jobCommand(command string) string {
	if r := s.opts.Shape.Redactor; r != nil {
		command, _ = r.String(command)
	}
	return CutJobCommand(command)
}

// CutJobCommand cuts command to MaxJobCommandBytes on a rune boundary, an
// ellipsis marking the cut.
func CutJobCommand(command string) string {
	if len(command) <= MaxJobCommandBytes {
		return command
	}
	const mark = "…"
	cut := MaxJobCommandBytes - len(mark)
	for cut > 0 && !utf8.RuneStart(command[cut]) {
		cut--
	}
	return command[:cut] + mark
}

// maxJobNumber bounds the number of an id read back from a jobs record,
// so that numbering after it cannot overflow.
const maxJobNumber = 1 << 30

// jobNumber is n of the id "bg-n"; 0 for another id.
func jobNumber(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "bg-"))
	if err != nil || !strings.HasPrefix(id, "bg-") || n < 0 || n > maxJobNumber {
		return 0
	}
	return n
}

// adoptPriorJobs keeps the jobs of a previous process of the session, as
// lost when they were running, at most MaxBackground of them (the newest),
// and numbers new background commands after them so that no id names two.
func (s *Shell) adoptPriorJobs(prior []Job) {
	if len(prior) > MaxBackground {
		prior = prior[len(prior)-MaxBackground:]
	}
	for _, j := range prior {
		j = j.Lost()
		j.Command = CutJobCommand(j.Command)
		s.prior = append(s.prior, j)
		s.bgNext = max(s.bgNext, jobNumber(j.ID))
	}
}

// jobsChanged tells Options.OnJobsChange that a job started or ended.
func (s *Shell) jobsChanged() {
	if s.opts.OnJobsChange != nil {
		s.opts.OnJobsChange()
	}
}

// JobTableHeader heads the table of JobRow rows (tab-separated).
const JobTableHeader = "ID\tSTATE\tCODE\tAGE\tCOMMAND"

// JobRow is j as a tab-separated table row at now: id, state, exit code
// ("-" unless exited), age and the command on one line. Redacting the
// command is the caller's (a Session's jobs come redacted).
func JobRow(j Job, now time.Time) string {
	code := "-"
	if j.State == JobExited {
		code = strconv.Itoa(j.ExitCode)
	}
	cmd := strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(j.Command)
	return j.ID + "\t" + string(j.State) + "\t" + code + "\t" + JobAge(now.Sub(j.Started)) + "\t" + cmd
}

// JobAge renders a job's age for a table: whole seconds, minutes, hours or
// days.
func JobAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
