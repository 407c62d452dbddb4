package tools

import (
	"context"

	wspace "winx/mcp/workspace"
)

// overviewJob is the workspace overview of a new session, built while the
// session's shell starts: the tree walk and git then run during the user's
// rc file instead of after it, and the answer waits for the later of the
// two, not their sum.
type overviewJob struct {
	root   string
	cancel context.CancelFunc
	// done is closed once ov and err are set; they are read only after it.
	done chan struct{}
	ov   wspace.Overview
	err  error
}

// startOverview starts building the overview of root within ctx (the
// call's: the job never outlives it).
func startOverview(ctx context.Context, root string, lim wspace.Limits) *overviewJob {
	ctx, cancel := context.WithCancel(ctx)
	j := &overviewJob{root: root, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.ov, j.err = wspace.NewOverview(ctx, root, lim)
	}()
	return j
}

// result is the overview of root: the job's when it was started for root,
// else (no job, another root) built now.
func (j *overviewJob) result(ctx context.Context, root string, lim wspace.Limits) (wspace.Overview, error) {
	if j == nil || j.root != root {
		return wspace.NewOverview(ctx, root, lim)
	}
	select {
	case <-j.done:
		return j.ov, j.err
	case <-ctx.Done():
		j.stop()
		return wspace.Overview{}, ctx.Err()
	}
}

// stop cancels the job and waits for it: a call that failed, or that
// reattached and shows no overview, leaves no work running.
func (j *overviewJob) stop() {
	if j == nil {
		return
	}
	j.cancel()
	<-j.done
}
