package tools

import (
	"context"
	"fmt"
	"time"

	"winx/guardian"
	"winx/mcp"
)

// A foreground command may outlive the call that started it. With a client
// that supports Tasks (the 2026-07-28 tasks extension, or a 2025-11-25 call
// that asked for one), BashCommand turns such a call into a task instead of
// answering "running": the client gets the task at once and reads the
// command's complete result through tasks/get when it ends.
//
// wait_policy decides when:
//   - adaptive (default): wait wait_for_seconds as usual; if the command is
//     still running then, promote the call and follow it to the end.
//   - until_complete: promote at once and follow the command to the end.
//   - return_early: never promote; answer "running" after at most 5 s.
//
// Without Tasks support every policy behaves as before: the call answers
// "running" after its wait and the model polls with status_check.

const (
	// taskPollSlice bounds one wait inside a task; the loop goes on until
	// the command ends, the task is cancelled, or maxTaskRuntime passes.
	taskPollSlice = 60 * time.Second
	// maxTaskRuntime bounds how long a task follows one command. After it
	// the task completes with status running and a status_check next
	// action, exactly like a call that timed out.
	maxTaskRuntime = 24 * time.Hour
	// taskInterruptWait bounds the wait for a cancelled command to stop.
	taskInterruptWait = 5 * time.Second
)

// runForeground runs a foreground command under the call's wait policy.
func (r *bashRun) runForeground(ctx context.Context, cmd string) (*guardian.Outcome, error) {
	if r.policy == "until_complete" && r.promote() {
		// The client holds the task from here on and may cancel it at any
		// moment. Launch without that cancellation so the generation is
		// always learned, then let follow honour it: a cancel that raced
		// the launch interrupts exactly this command.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tools: task cancelled before its command started: %w", ctx.Err())
		}
		o, err := r.term.Run(context.WithoutCancel(ctx), cmd, 0)
		if err != nil || !o.Running {
			return o, err
		}
		return r.follow(ctx, o)
	}
	o, err := r.term.Run(ctx, cmd, r.wait)
	if err != nil || !o.Running || r.policy == "return_early" || !r.promote() {
		return o, err
	}
	return r.follow(ctx, o)
}

// promote turns the call into a task; false when the client cannot have one.
func (r *bashRun) promote() bool { return r.req != nil && r.req.Promote() }

// follow polls a promoted command's generation until it ends and returns
// one outcome carrying all output since the command started, since the
// client saw none of it.
func (r *bashRun) follow(ctx context.Context, first *guardian.Outcome) (*guardian.Outcome, error) {
	o, err := guardian.Follow(ctx, r.term, first, taskPollSlice, time.Now().Add(maxTaskRuntime))
	if err != nil && ctx.Err() != nil {
		return r.cancelled(first.Generation, ctx.Err())
	}
	return o, err
}

// cancelled handles a task cancelled while its command runs: interrupt that
// generation only (a task cancelled after its command ended must never
// interrupt the next).
func (r *bashRun) cancelled(gen uint64, cause error) (*guardian.Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*taskInterruptWait)
	defer cancel()
	r.term.Cancel(ctx, gen, taskInterruptWait)
	return nil, fmt.Errorf("tools: task cancelled: %w", cause)
}

// bashExecution declares that BashCommand calls may become tasks.
var bashExecution = &mcp.ToolExecution{TaskSupport: mcp.TaskOptional}
