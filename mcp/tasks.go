package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"winx/jsonrpc"
)

// TasksExtension is the 2026-07-28 extension identifier for tasks.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task support values of a tool (Tool.Execution.TaskSupport).
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// Task statuses shared by both eras.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// legacyTasksCapability is what 2025-11-25 initialize advertises.
var legacyTasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

const (
	// taskTTL is how long a finished task stays readable.
	taskTTL = time.Hour
	// taskPollInterval is the polling pace suggested to clients.
	taskPollInterval = 500 * time.Millisecond
	// maxTasks bounds the store; the oldest finished tasks go first.
	maxTasks = 1024
)

// task is one promoted tool call. Its mutable fields are guarded by the
// store's mutex; done is closed once, when the status becomes terminal.
type task struct {
	id      string
	owner   string // principal; a task is invisible to everyone else
	created time.Time
	updated time.Time
	status  string
	message string
	result  json.RawMessage // CallToolResult when completed
	err     *jsonrpc.Error  // when failed
	cancel  context.CancelFunc
	done    chan struct{}
	// inputRequests are open questions (status input_required); answers
	// arrive on answers keyed the same way.
	inputRequests map[string]InputRequest
	answers       map[string]json.RawMessage
	answered      chan struct{} // signalled (non-blocking) on each update
	usedKeys      map[string]bool
}

func (t *task) terminal() bool {
	return t.status == TaskCompleted || t.status == TaskFailed || t.status == TaskCancelled
}

// taskStore owns every task of the server.
type taskStore struct {
	now func() time.Time

	mu    sync.Mutex // guards tasks and every task's mutable fields
	tasks map[string]*task
	order []string // creation order, for eviction
}

func newTaskStore(now func() time.Time) *taskStore {
	return &taskStore{now: now, tasks: make(map[string]*task)}
}

func newTaskID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("mcp: no randomness for task ids: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// create registers a new working task, or returns nil when maxTasks are
// still running: the call then simply stays synchronous.
func (s *taskStore) create(owner string, cancel context.CancelFunc) *task {
	now := s.now()
	t := &task{
		id: newTaskID(), owner: owner, created: now, updated: now, status: TaskWorking,
		cancel: cancel, done: make(chan struct{}), answered: make(chan struct{}, 1),
		answers: map[string]json.RawMessage{}, usedKeys: map[string]bool{},
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked(now)
	if len(s.tasks) >= maxTasks {
		return nil
	}
	s.tasks[t.id] = t
	s.order = append(s.order, t.id)
	return t
}

// evictLocked drops expired finished tasks, and the oldest finished ones
// while the store is full.
func (s *taskStore) evictLocked(now time.Time) {
	kept := s.order[:0]
	for _, id := range s.order {
		t := s.tasks[id]
		if t.terminal() && (now.Sub(t.updated) > taskTTL || len(s.tasks) >= maxTasks) {
			delete(s.tasks, id)
			continue
		}
		kept = append(kept, id)
	}
	s.order = kept
}

func (s *taskStore) get(owner, id string) (*task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok || t.owner != owner {
		return nil, false
	}
	return t, true
}

// finish records the outcome unless the task already ended (a cancel wins).
func (s *taskStore) finish(t *task, result json.RawMessage, err *jsonrpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.terminal() {
		return
	}
	t.updated = s.now()
	t.inputRequests = nil
	if err != nil {
		t.status, t.err = TaskFailed, err
	} else {
		t.status, t.result = TaskCompleted, result
	}
	close(t.done)
}

func (s *taskStore) cancelTask(t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.terminal() {
		return
	}
	t.status = TaskCancelled
	t.updated = s.now()
	t.inputRequests = nil
	t.cancel()
	close(t.done)
}

// ask publishes input requests and waits until each has an answer.
func (s *taskStore) ask(ctx context.Context, t *task, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	s.mu.Lock()
	for k, v := range reqs {
		if t.usedKeys[k] {
			s.mu.Unlock()
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "input request key reused within a task: "+k)
		}
		if t.inputRequests == nil {
			t.inputRequests = map[string]InputRequest{}
		}
		t.inputRequests[k] = v
	}
	t.status = TaskInputRequired
	t.updated = s.now()
	s.mu.Unlock()
	for {
		s.mu.Lock()
		out := map[string]json.RawMessage{}
		for k := range reqs {
			if a, ok := t.answers[k]; ok {
				out[k] = a
			}
		}
		if len(out) == len(reqs) {
			for k := range reqs {
				delete(t.answers, k)
				t.usedKeys[k] = true
			}
			if len(t.inputRequests) == 0 && !t.terminal() {
				t.status = TaskWorking
				t.updated = s.now()
			}
			s.mu.Unlock()
			return out, nil
		}
		s.mu.Unlock()
		select {
		case <-t.answered:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// update records answers; unknown keys are ignored, as the extension asks.
func (s *taskStore) update(t *task, responses map[string]json.RawMessage) {
	s.mu.Lock()
	for k, v := range responses {
		if _, open := t.inputRequests[k]; open {
			delete(t.inputRequests, k)
			t.answers[k] = v
		}
	}
	t.updated = s.now()
	s.mu.Unlock()
	select {
	case t.answered <- struct{}{}:
	default:
	}
}

// taskView is the 2026-07-28 wire form of a task.
type taskView struct {
	ResultHeader
	TaskID         string                  `json:"taskId"`
	Status         string                  `json:"status"`
	StatusMessage  string                  `json:"statusMessage,omitempty"`
	CreatedAt      string                  `json:"createdAt"`
	LastUpdatedAt  string                  `json:"lastUpdatedAt"`
	TTLMs          int64                   `json:"ttlMs"`
	PollIntervalMs int64                   `json:"pollIntervalMs"`
	InputRequests  map[string]InputRequest `json:"inputRequests,omitempty"`
	Result         json.RawMessage         `json:"result,omitempty"`
	Error          *jsonrpc.Error          `json:"error,omitempty"`
	// Content is present (as []) only on the creation answer: strict
	// validators read a tools/call answer as a CallToolResult, which needs
	// it. omitzero, not omitempty, so that an empty non-nil slice is kept.
	Content []Content `json:"content,omitzero"`
}

func (s *taskStore) view(t *task, detailed bool) *taskView {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &taskView{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		TTLMs: taskTTL.Milliseconds(), PollIntervalMs: taskPollInterval.Milliseconds(),
	}
	if detailed {
		if len(t.inputRequests) > 0 {
			v.InputRequests = make(map[string]InputRequest, len(t.inputRequests))
			for k, r := range t.inputRequests {
				v.InputRequests[k] = r
			}
		}
		v.Result, v.Error = t.result, t.err
	}
	return v
}

// legacyTask is the 2025-11-25 wire form of a task.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

func (s *taskStore) legacyView(t *task) legacyTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return legacyTask{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		TTL: taskTTL.Milliseconds(), PollInterval: taskPollInterval.Milliseconds(),
	}
}

// legacyCreateTaskResult answers a 2025-11-25 tools/call made as a task.
type legacyCreateTaskResult struct {
	ResultHeader
	Task legacyTask `json:"task"`
}

// legacyTaskResult is the flat task answer of 2025-11-25 tasks/get and
// tasks/cancel.
type legacyTaskResult struct {
	ResultHeader
	legacyTask
}

type listTasksResult struct {
	ResultHeader
	Tasks []legacyTask `json:"tasks"`
}

type rawResult struct {
	ResultHeader
	raw json.RawMessage
}

// MarshalJSON writes the stored result unchanged (legacy tasks/result).
func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

type taskIDParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

func tasksCapabilityError() *jsonrpc.Error {
	return jsonrpc.NewErrorWithData(CodeMissingRequiredClientCapability, "the tasks extension was not declared",
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
}

// The task handlers below are one per row of the route table: lookup has
// already applied the row's era and extension flags, so each handler only
// finds the caller's task and answers in the exchange's era.

// findTask returns the caller's task named by p; another principal's task
// is as unknown as one that never existed.
func (s *Server) findTask(ex *exchange, p *taskIDParams) (*task, error) {
	t, ok := s.tasks.get(ex.caller.Principal, p.TaskID)
	if !ok {
		return nil, invalidParams("unknown task %q", p.TaskID)
	}
	return t, nil
}

// getTask answers tasks/get: the detailed view in the modern era, the flat
// task in the legacy one.
func (s *Server) getTask(_ context.Context, ex *exchange, p *taskIDParams) (result, error) {
	t, err := s.findTask(ex, p)
	if err != nil {
		return nil, err
	}
	if ex.era == eraModern {
		return s.tasks.view(t, true), nil
	}
	return &legacyTaskResult{legacyTask: s.tasks.legacyView(t)}, nil
}

// updateTask answers tasks/update (modern only): it records the answers to
// the task's open input requests.
func (s *Server) updateTask(_ context.Context, ex *exchange, p *taskIDParams) (result, error) {
	t, err := s.findTask(ex, p)
	if err != nil {
		return nil, err
	}
	s.tasks.update(t, p.InputResponses)
	return &EmptyResult{}, nil
}

// cancelTask answers tasks/cancel: empty in the modern era, the flat task
// in the legacy one.
func (s *Server) cancelTask(_ context.Context, ex *exchange, p *taskIDParams) (result, error) {
	t, err := s.findTask(ex, p)
	if err != nil {
		return nil, err
	}
	s.tasks.cancelTask(t)
	if ex.era == eraModern {
		return &EmptyResult{}, nil
	}
	return &legacyTaskResult{legacyTask: s.tasks.legacyView(t)}, nil
}

// taskResult answers legacy tasks/result: it waits for the task to end and
// answers with its stored result, or its error.
func (s *Server) taskResult(ctx context.Context, ex *exchange, p *taskIDParams) (result, error) {
	t, err := s.findTask(ex, p)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.tasks.mu.Lock()
	res, terr, status := t.result, t.err, t.status
	s.tasks.mu.Unlock()
	if terr != nil {
		return nil, terr
	}
	if status == TaskCancelled {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "task was cancelled")
	}
	return &rawResult{raw: res}, nil
}

// listLegacyTasks answers legacy tasks/list: the caller's tasks, oldest
// first. Its params are not read.
func (s *Server) listLegacyTasks(ex *exchange) result {
	s.tasks.mu.Lock()
	ids := append([]string(nil), s.tasks.order...)
	s.tasks.mu.Unlock()
	out := []legacyTask{}
	for _, id := range ids {
		if t, ok := s.tasks.get(ex.caller.Principal, id); ok {
			out = append(out, s.tasks.legacyView(t))
		}
	}
	return &listTasksResult{Tasks: out}
}
