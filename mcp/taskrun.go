package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"winx/jsonrpc"
)

// promotion lets a running tool call turn into a task. Until Promote, the
// call is an ordinary request whose client waits; afterwards the client got a
// task id and the handler's outcome goes to the task store.
type promotion struct {
	store  *taskStore
	owner  string
	cancel context.CancelFunc // cancels the handler's context
	signal chan struct{}      // closed when promoted

	mu sync.Mutex // guards task and abandoned
	// task is set once, by the first Promote.
	task *task
	// abandoned is set when the client went away before any promotion:
	// promoting then would create a task nobody can find.
	abandoned bool
}

// Promote turns the call into a task (2026-07-28 with the tasks extension,
// or a 2025-11-25 call that asked for one). The client is answered at once
// with the task, and the handler keeps running; its result becomes the task's.
// It reports false when the call cannot be a task; the handler then simply
// continues as a normal call.
func (r *ToolRequest) Promote() bool {
	p := r.promotion
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.abandoned {
		return false
	}
	if p.task == nil {
		t := p.store.create(p.owner, p.cancel)
		if t == nil {
			return false
		}
		p.task = t
		close(p.signal)
	}
	return true
}

// currentTask returns the task the call became, or nil.
func (r *ToolRequest) currentTask() *task {
	if r.promotion == nil {
		return nil
	}
	r.promotion.mu.Lock()
	defer r.promotion.mu.Unlock()
	return r.promotion.task
}

type legacyTaskParam struct {
	TTL *int64 `json:"ttl"`
}

// taskMode decides, per request, whether a call may become a task.
func taskMode(ex *exchange, tool *Tool, legacyParam json.RawMessage) (allowed bool, eager bool, err error) {
	support := TaskForbidden
	if tool.Execution != nil && tool.Execution.TaskSupport != "" {
		support = tool.Execution.TaskSupport
	}
	if support == TaskForbidden {
		return false, false, nil
	}
	if ex.era == eraModern {
		// The legacy "task" parameter is ignored in 2026-07-28: the server
		// decides, and only for clients that declared the extension.
		has := ex.caps.HasExtension(TasksExtension)
		if !has && support == TaskRequired {
			return false, false, tasksCapabilityError()
		}
		return has, false, nil
	}
	if ex.version != Version20251125 {
		return false, false, nil
	}
	asked := len(legacyParam) > 0 && string(legacyParam) != "null"
	if asked {
		var lp legacyTaskParam
		if err := json.Unmarshal(legacyParam, &lp); err != nil {
			return false, false, invalidParams("task must be an object")
		}
	}
	if !asked && support == TaskRequired {
		return false, false, invalidParams("tool requires task-augmented execution")
	}
	// A 2025-11-25 client that asked for a task is owed a CreateTaskResult.
	return asked, asked, nil
}

type toolOutcome struct {
	res result
	err error
}

// maybeStartTask runs a call that may become a task. It returns ok=false when
// the call is not task-capable here, and the caller runs it synchronously.
func (s *Server) maybeStartTask(ctx context.Context, ex *exchange, rt *registeredTool, tr *ToolRequest, legacyParam json.RawMessage) (result, bool, error) {
	allowed, eager, err := taskMode(ex, &rt.tool, legacyParam)
	if err != nil || !allowed {
		return nil, false, err
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &promotion{store: s.tasks, owner: ex.caller.Principal, cancel: cancel, signal: make(chan struct{})}
	tr.promotion = p
	// Server-to-client traffic of a task has no request stream to ride on
	// once the client has its answer; progress and logs are dropped then.
	if eager {
		tr.Promote()
	}
	outcome := make(chan toolOutcome, 1)
	go func() {
		defer cancel()
		res, err := runTool(hctx, rt, tr)
		if t := tr.currentTask(); t != nil {
			s.settleTask(t, tr, res, err)
			return
		}
		r, e := s.toolResult(tr, res, err)
		outcome <- toolOutcome{r, e}
	}()
	select {
	case o := <-outcome:
		return o.res, true, o.err
	case <-p.signal:
		t := tr.currentTask()
		if ex.era == eraLegacy {
			return &legacyCreateTaskResult{Task: s.tasks.legacyView(t)}, true, nil
		}
		v := s.tasks.view(t, false)
		v.ResultType = ResultTask
		v.Content = []Content{}
		return v, true, nil
	case <-ctx.Done():
		p.mu.Lock()
		promoted := p.task != nil
		if !promoted {
			p.abandoned = true
			cancel()
		}
		p.mu.Unlock()
		return nil, true, ctx.Err()
	}
}

// settleTask stores a promoted handler's outcome in its task.
func (s *Server) settleTask(t *task, tr *ToolRequest, res *CallToolResult, err error) {
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			if errors.Is(err, context.Canceled) {
				we = jsonrpc.NewError(jsonrpc.CodeInternalError, "task cancelled")
			} else {
				s.logger.Error("task failed", "tool", tr.Name, "err", err)
				we = jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error")
			}
		}
		s.tasks.finish(t, nil, we)
		return
	}
	if res == nil {
		s.tasks.finish(t, nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tool returned no result"))
		return
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	wire := &callToolWire{CallToolResult: res}
	if tr.Modern() {
		wire.ResultType = ResultComplete
	}
	s.tasks.finish(t, mustMarshal(wire), nil)
}
