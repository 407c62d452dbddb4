package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"winx/evidence/redact"
	"winx/guardian"
	"winx/mcp"
	"winx/mcp/session"
	wspace "winx/mcp/workspace"
)

// BashCommandTool is the shell tool's name.
const BashCommandTool = "BashCommand"

// Waiting limits of BashCommand.
const (
	defaultWaitSeconds  = 15
	maxWaitSeconds      = 600
	returnEarlySeconds  = 5
	defaultQuietMs      = 600
	defaultTurnTimeout  = 30
	maxScreenLineOption = 1000
)

// Error codes of BashCommand.
const (
	codeCommandAlreadyRunning = "command_already_running"
	codeCommandNotRunning     = "command_not_running"
	// codePersonAttached: a person types in the session's terminal (winx
	// attach --interactive); the agent's action was refused.
	codePersonAttached = "person_attached"
	// A program waits at a prompt (status awaiting_input or
	// awaiting_approval); the next action types the answer.
	codeInputRequired    = "input_required"
	codeApprovalRequired = "approval_required"
)

// bashInput is BashCommand's arguments. action_json may also be a JSON
// string (holding an object, or a plain command); a top-level command is
// accepted for clients that flatten the action.
type bashInput struct {
	ActionJSON     json.RawMessage `json:"action_json"`
	Command        *string         `json:"command"`
	WaitForSeconds *float64        `json:"wait_for_seconds"`
	WaitPolicy     string          `json:"wait_policy"`
	ThreadID       string          `json:"thread_id"`
	WorkspaceRoot  string          `json:"workspace_root"`
}

type bashTool struct {
	// affinity is the catalog's session affinity (the scope of a reattach).
	affinity     string
	sessions     *session.Sessions
	keepTailPipe bool // WINX_KEEP_TAIL_PIPE=1, read once at start
	memo         *shellMemos

	artifacts tempArtifacts // temporary-artifact limits (tempartifacts.go)
	// recognizer is WINX_TURN_RECOGNIZER_CONFIG, parsed once at start;
	// nil when unset.
	recognizer *guardian.TurnRecognizer
	// stateDir holds the principals' state (the last command record a
	// lost session names); redactor cleans a lost session's lines.
	stateDir string
	redactor *redact.Redactor
}

// CompactBashOutputExtension is the client extension that asks for
// BashCommand text without the status trailer ("---", exit code, cwd):
// the same facts stay in structuredContent.
const CompactBashOutputExtension = "io.winx/compact-bash-output"

func addBashCommand(reg *mcp.Registry, opts Options) {
	t := &bashTool{sessions: opts.Sessions, affinity: opts.Affinity, keepTailPipe: opts.KeepTailPipe, memo: newShellMemos(), recognizer: opts.TurnRecognizer,
		stateDir: opts.StateDir, redactor: opts.redactor()}
	reg.AddExtension(CompactBashOutputExtension)
	reg.AddTool(mcp.Tool{
		Name:         BashCommandTool,
		Title:        "Run shell commands",
		Description:  bashDescription,
		InputSchema:  bashSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Execution:    bashExecution,
		Waits:        true, // on the shell: its CPU is the guardian's, not the server's
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    mcp.Bool(false),
			DestructiveHint: mcp.Bool(true),
			OpenWorldHint:   mcp.Bool(true),
		},
	}, t.handle)
}

const bashDescription = `Run a command in the session's persistent bash (cd, variables persist) or act on what runs: status_check polls, send_text / send_specials / send_ascii type into it, screen shows the terminal, wait_for_turn waits until a TUI is quiet. One foreground command at a time; is_background for long jobs, jobs lists them. Long output keeps its tail; the head goes to a named file.`

// bashSchema is the input schema; action_json's object properties come
// from the action table (bashactions.go).
var bashSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action_json": {
      "description": "object tagged by type, or a command string",
      "anyOf": [
        {"type": "string"},
        {
          "type": "object",
          "properties": {
` + actionSchemaProperties() + `
          }
        }
      ]
    },
    "command": {"type": "string", "description": "shorthand for a command action"},
    "wait_for_seconds": {"type": "number", "minimum": 0, "maximum": 600, "description": "wait before answering running (default 15; none for a background status_check)"},
    "wait_policy": {"type": "string", "enum": ["adaptive", "return_early", "until_complete"], "description": "return_early: at most 5 s; until_complete: to the end (not with is_background)"},
    "thread_id": {"type": "string", "minLength": 1},
    "workspace_root": {"type": "string", "minLength": 1}
  },
  "required": ["thread_id", "workspace_root"],
  "additionalProperties": false
}`)

func (t *bashTool) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in bashInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return bashFailure(err), nil
	}
	act, err := in.action()
	if err != nil {
		return bashFailure(err), nil
	}
	facts := mcp.CallFacts{Action: act.Type}
	if act.Type == actCommand && act.Command != nil {
		facts.Category = commandCategory(*act.Command)
	}
	mcp.NoteCall(ctx, facts)
	wait, err := in.wait()
	if err != nil {
		return bashFailure(err), nil
	}
	if act.Type == actStatusCheck && act.BgCommandID != "" && in.WaitForSeconds == nil && in.WaitPolicy == "" {
		// A look at a background job answers at once: it runs on its own
		// PTY and the main shell stays free, so the default wait would
		// only cost the agent 15 s. A wait is given when asked for.
		wait = 0
	}
	if in.WorkspaceRoot == "" {
		return bashFailure(session.ErrWorkspaceBindingRequired), nil
	}
	if act.Type == actCommand && act.IsBackground && in.WaitPolicy == "until_complete" {
		return untilCompleteBackground(req.Arguments), nil
	}
	sess, err := lookupSession(ctx, t.sessions, t.affinity, req.Caller(), in.ThreadID, in.WorkspaceRoot)
	if err != nil {
		return bashFailure(err), nil
	}
	sess.UseHistoryDir(wspace.PrincipalStateDir(t.stateDir, sess.Principal))
	term := sess.Shell()
	if res := bashGate(ctx, sess, term, act, in.ThreadID, in.WorkspaceRoot); res != nil { // the session mode (modepolicy.go)
		return res, nil
	}
	if res := t.artifacts.check(ctx, t.sessions, sess, act, in.ThreadID, in.WorkspaceRoot); res != nil {
		return res, nil
	}
	r := bashRun{term: term, act: act, wait: wait, threadID: in.ThreadID, root: in.WorkspaceRoot, keepTailPipe: t.keepTailPipe,
		req: req, policy: in.WaitPolicy, memo: t.memo.of(term), recognizer: t.recognizer,
		compact: req.ClientCapabilities().HasExtension(CompactBashOutputExtension),
		lost:    func() *mcp.CallToolResult { return t.lostAnswer(ctx, sess, in.ThreadID) }}
	// A whole line typed at the idle prompt is a command: it takes the
	// command's path from the top, through the same mode policy and
	// temporary-artifact rules, so typing can reach nothing a command
	// cannot (prompt.go).
	r.atPrompt = func(ctx context.Context, line string) *mcp.CallToolResult {
		cmdAct := &action{Type: actCommand, Command: &line}
		if res := bashGate(ctx, sess, term, cmdAct, in.ThreadID, in.WorkspaceRoot); res != nil {
			return res
		}
		if res := t.artifacts.check(ctx, t.sessions, sess, cmdAct, in.ThreadID, in.WorkspaceRoot); res != nil {
			return res
		}
		typed := r
		typed.act, typed.atPrompt, typed.typedAtPrompt = cmdAct, nil, true
		return typed.do(ctx)
	}
	return t.artifacts.annotate(r.do(ctx), t.sessions, act, sess, t.redactor), nil
}

// action decodes action_json in any accepted shape.
func (in *bashInput) action() (*action, error) {
	raw := bytes.TrimSpace(in.ActionJSON)
	if len(raw) == 0 || string(raw) == "null" {
		if in.Command == nil {
			return nil, &InputError{Msg: "action_json (or command) is required"}
		}
		return &action{Type: actCommand, Command: in.Command}, nil
	}
	if in.Command != nil {
		return nil, &InputError{Msg: "give either action_json or command, not both"}
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &InputError{Msg: "action_json is not a valid string"}
		}
		trimmed := strings.TrimSpace(s)
		if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
			raw = []byte(trimmed)
		} else {
			return &action{Type: actCommand, Command: &s}, nil
		}
	}
	if raw[0] != '{' {
		return nil, &InputError{Msg: "action_json must be an object or a string"}
	}
	var a action
	if err := decodeArguments(raw, &a); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			ie.Msg = "action_json: " + ie.Msg
		}
		return nil, err
	}
	if a.Type == "" {
		a.Type = inferActionType(raw)
	}
	if _, ok := lookupAction(a.Type); !ok {
		return nil, &InputError{Msg: fmt.Sprintf("action_json.type %q is not one of %s", a.Type, strings.Join(actionTypeNames(), ", "))}
	}
	return &a, nil
}

// inferActionType picks the type implied by the first key present, in the
// object's own key order.
func inferActionType(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return ""
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := tok.(string)
		if typ := impliedAction(key); typ != "" {
			return typ
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}

// wait turns wait_for_seconds and wait_policy into a duration.
func (in *bashInput) wait() (time.Duration, error) {
	secs := float64(defaultWaitSeconds)
	if in.WaitForSeconds != nil {
		secs = *in.WaitForSeconds
		if secs < 0 || secs > maxWaitSeconds {
			return 0, &InputError{Msg: fmt.Sprintf("wait_for_seconds must be between 0 and %d", maxWaitSeconds)}
		}
	}
	switch in.WaitPolicy {
	case "", "adaptive":
	case "return_early":
		secs = min(secs, returnEarlySeconds)
	case "until_complete":
		secs = maxWaitSeconds
	default:
		return 0, &InputError{Msg: fmt.Sprintf("wait_policy %q is not one of adaptive, return_early, until_complete", in.WaitPolicy)}
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// bashRun is one BashCommand call after its session was resolved.
type bashRun struct {
	term     terminal
	act      *action
	wait     time.Duration
	threadID string
	root     string
	// keepTailPipe keeps a trailing "| tail" that is dropped by default.
	keepTailPipe bool
	// req may turn the call into a task under policy (wait_policy); see
	// bashtasks.go.
	req    *mcp.ToolRequest
	policy string
	// memo is what this adapter remembers of the shell (shellmemo.go).
	memo *shellMemo
	// recognizer is the configured turn recognizer, nil when none.
	recognizer *guardian.TurnRecognizer
	// compact leaves the status trailer out of the text: the client
	// advertised CompactBashOutputExtension.
	compact bool
	// droppedTail is the trailing "| tail ..." removed from the command,
	// said in the answer's text.
	droppedTail string
	// lost answers a call that found the session's shell lost
	// (bashTool.lostAnswer), within the call's context.
	lost func() *mcp.CallToolResult
	// atPrompt runs a line typed into the idle shell as a command
	// (prompt.go); nil once it did, so a line is never typed twice.
	atPrompt func(ctx context.Context, line string) *mcp.CallToolResult
	// typedAtPrompt says, in the answer, that the command was typed.
	typedAtPrompt bool
}

// failure is the answer of an action that failed with err; a shell found
// lost is replaced and reported (lostAnswer), never a bare "gone".
func (r *bashRun) failure(err error) *mcp.CallToolResult {
	if errors.Is(err, guardian.ErrShellLost) && r.lost != nil {
		return r.lost()
	}
	if errors.Is(err, guardian.ErrUnknownBg) {
		env := mcp.Envelope{Status: mcp.StatusNotFound, Tool: BashCommandTool, ErrorCode: codeCommandNotRunning, Retryable: true,
			Message: "There is no background command with that bg_command_id.",
			NextAction: &mcp.NextAction{Tool: BashCommandTool, Instruction: "List the background commands and their ids.",
				Arguments: map[string]any{"action_json": map[string]any{"type": actJobs}, "thread_id": r.threadID, "workspace_root": r.root}}}
		return env.Result(env.Message)
	}
	if errors.Is(err, guardian.ErrPersonAttached) {
		return r.personAttached()
	}
	return bashFailure(err)
}

// lostAnswer is the answer of a call whose session's shell was found lost:
// the shell is replaced by a fresh one in the workspace (same mode), and
// the answer says what was lost. The call itself did not run.
func (t *bashTool) lostAnswer(ctx context.Context, sess *session.Session, threadID string) *mcp.CallToolResult {
	if _, err := t.sessions.Revive(ctx, sess); err != nil {
		return bashFailure(err)
	}
	tid := session.ThreadIDOrDefault(threadID, sess.ExternalID)
	env := mcp.Envelope{Status: mcp.StatusFailed, Tool: BashCommandTool, ErrorCode: codeRecoveredMissingSession, Retryable: true}
	var b strings.Builder
	rep, ok := sess.TakeLost()
	if !ok {
		// Another call replaced the shell and took the report.
		env.Message = "The session's shell was lost and has been replaced by a fresh one in " + sess.Root + "; this call did not run."
		return env.Result(env.Message)
	}
	env.Message = lostSummary(sess.Root, rep) + " This call did not run."
	b.WriteString(env.Message + "\n")
	d, next := lostBlock(&b, rep, t.redactor, tid, sess.Root)
	env.Data, env.NextAction = struct {
		Lost *lostData `json:"lost"`
	}{&d}, next
	text, _ := t.redactor.String(b.String())
	return env.Result(text)
}

// do runs the action its row names (bashactions.go).
func (r *bashRun) do(ctx context.Context) *mcp.CallToolResult {
	spec, ok := lookupAction(r.act.Type)
	if !ok {
		return bashFailure(&InputError{Msg: "unknown action type " + r.act.Type})
	}
	return spec.run(r, ctx)
}

// bashData is BashCommand's typed data.
//
// It is lean: a completed command carries its exit code and cwd; the
// generation and running time only while the command runs (the model
// polls it then), counters only when non-zero.
type bashData struct {
	// Generation is the command's generation, for the session's command
	// history (noteCommand); CommandGeneration shows it while it runs.
	Generation        uint64 `json:"-"`
	CommandGeneration uint64 `json:"command_generation,omitempty"`
	ExitCode          *int   `json:"exit_code,omitempty"`
	// Cwd is said once, in the text ("cwd: ..."), which the model reads
	// in either view; it is kept here for the session's history.
	Cwd               string `json:"-"`
	RunningTimeMs     int64  `json:"running_time_ms,omitempty"`
	BgCommandID       string `json:"bg_command_id,omitempty"`
	DroppedOutputFile string `json:"dropped_output_file,omitempty"`
	DroppedBytes      int    `json:"dropped_bytes,omitempty"`
	CollapsedRuns     int    `json:"collapsed_runs,omitempty"`
	Redactions        int    `json:"redactions,omitempty"`
	ShellExited       bool   `json:"shell_exited,omitempty"`
	ShellReset        bool   `json:"shell_reset,omitempty"`
	AltScreen         *bool  `json:"alt_screen,omitempty"`
	Title             string `json:"title,omitempty"`
	ChangedRows       []int  `json:"changed_rows,omitempty"`
	Quiet             *bool  `json:"quiet,omitempty"`
	// Jobs are the background commands a jobs action lists.
	Jobs []guardian.Job `json:"jobs,omitempty"`
	// TempArtifactUse is the highest share, in percent, of a temporary-
	// artifact budget in use, set from 80 on (tempartifacts.go).
	TempArtifactUse int `json:"temp_artifact_use_percent,omitempty"`
	// TempArtifacts is the session's temporary-artifact usage after the
	// action, and what stale-directory reclaims freed (tempartifacts.go).
	TempArtifacts *tempArtifactData `json:"temp_artifacts,omitempty"`
}

func (r *bashRun) statusCheck(instruction string) *mcp.NextAction {
	args := map[string]any{
		"action_json":    map[string]any{"type": actStatusCheck},
		"thread_id":      r.threadID,
		"workspace_root": r.root,
	}
	if r.act.BgCommandID != "" {
		args["action_json"] = map[string]any{"type": actStatusCheck, "bg_command_id": r.act.BgCommandID}
	}
	return &mcp.NextAction{Tool: BashCommandTool, Instruction: instruction, Arguments: args}
}

func (r *bashRun) outcome(ctx context.Context, o *guardian.Outcome, err error) *mcp.CallToolResult {
	if errors.Is(err, guardian.ErrCommandRunning) {
		what := "A command is already running in this shell"
		if running := r.memo.runningCommand(); running != "" {
			what = fmt.Sprintf("The command %q is still running in this shell", running)
		}
		env := mcp.Envelope{
			Status: mcp.StatusConflict, Tool: BashCommandTool, ErrorCode: codeCommandAlreadyRunning, Retryable: true,
			Message:    what + "; the new one was not queued. Check on it, interrupt it with send_specials Ctrl-c, or run the new command with is_background.",
			NextAction: r.statusCheck("Check the running command before starting another."),
		}
		return env.Result(env.Message)
	}
	if errors.Is(err, guardian.ErrPersonAttached) {
		return r.personAttached()
	}
	if errors.Is(err, guardian.ErrNotRunning) {
		env := mcp.Envelope{Status: mcp.StatusNotFound, Tool: BashCommandTool, ErrorCode: codeCommandNotRunning, Retryable: true,
			Message: "No command is running in this shell; run one with action_json type command."}
		if o != nil && o.PersonNote != "" {
			// A look that found nothing new still carries the news of a
			// person who typed in the session.
			return env.Result(personNoteLine(o.PersonNote) + env.Message)
		}
		return env.Result(env.Message)
	}
	if err != nil {
		return r.failure(err)
	}
	if r.memo != nil && r.act.BgCommandID == "" {
		r.memo.observed(o)
	}
	data := bashData{
		Generation: o.Generation, Cwd: o.Cwd,
		BgCommandID: r.act.BgCommandID, DroppedOutputFile: o.Output.DroppedFile, DroppedBytes: o.Output.DroppedBytes,
		CollapsedRuns: o.Output.Collapsed, Redactions: o.Output.Redactions, ShellExited: o.ShellExited, ShellReset: o.ShellReset,
	}
	var b strings.Builder
	if o.PersonNote != "" {
		b.WriteString(personNoteLine(o.PersonNote))
	}
	if r.droppedTail != "" {
		// The model asked for a tail; it gets the bounded output instead
		// and must know why there is more than it asked for.
		fmt.Fprintf(&b, "[winx: the trailing `| %s` was not run: output is bounded already (its tail is kept); WINX_KEEP_TAIL_PIPE=1 keeps it]\n", r.droppedTail)
	}
	if r.typedAtPrompt {
		b.WriteString("[winx: no command was running, so the typed line ran at the shell's prompt as a command]\n")
	}
	b.WriteString(o.Output.Text)
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	env := mcp.Envelope{Tool: BashCommandTool, Data: data}
	var trailer strings.Builder
	if rows, ok := r.fullScreen(ctx, o); ok {
		// A full-screen program: its screen is the answer (fullscreen.go),
		// the output it drew there is no text to deliver.
		b.Reset()
		b.WriteString(strings.Join(rows, "\n"))
		b.WriteString("\n")
		// It waits for keys, whether it blocks in read (less) or in
		// select (vi): nothing happens until someone types.
		env.Status, env.ErrorCode = mcp.StatusAwaitingInput, codeInputRequired
		env.Message = "A full-screen program holds the terminal; the text is its screen, and it reads keys."
		env.NextAction = r.fullScreenNext(o.Command)
		alt := true
		data.CommandGeneration, data.RunningTimeMs, data.AltScreen = o.Generation, o.Elapsed.Milliseconds(), &alt
		env.Data = data
		fmt.Fprintf(&trailer, "---\nrunning for %.1f s\ncwd: %s", o.Elapsed.Seconds(), o.Cwd)
	} else if o.Running && o.AwaitingInput {
		// The process reads its terminal: that is input whatever the
		// prompt asks (a yes/no question is named in the message only);
		// awaiting_approval belongs to wait_for_turn's recognizers.
		env.Status, env.ErrorCode = mcp.StatusAwaitingInput, codeInputRequired
		what := "input"
		if r.promptKind(o.Output.Text) == guardian.TurnAwaitingApproval {
			what = "an answer (a yes/no question)"
		}
		env.Message = fmt.Sprintf("The command waits for %s at its prompt (shown once, as the last line of the output that carried it).", what)
		env.NextAction = r.sendText("Answer the prompt with send_text (submit true presses Enter), or interrupt with send_specials Ctrl-c.")
		data.CommandGeneration, data.RunningTimeMs = o.Generation, o.Elapsed.Milliseconds()
		env.Data = data
		// The status is said once, by the action line Result adds.
		fmt.Fprintf(&trailer, "---\nrunning for %.1f s\ncwd: %s", o.Elapsed.Seconds(), o.Cwd)
	} else if o.Running {
		env.Status = mcp.StatusRunning
		env.NextAction = r.statusCheck("Poll the running command for new output, or interrupt it with send_specials Ctrl-c.")
		data.CommandGeneration, data.RunningTimeMs = o.Generation, o.Elapsed.Milliseconds()
		env.Data = data
		// No message: the text says how long it has run, and the action
		// line the status and the next call, once each.
		fmt.Fprintf(&trailer, "---\nrunning for %.1f s\ncwd: %s", o.Elapsed.Seconds(), o.Cwd)
	} else {
		code := o.ExitCode
		data.ExitCode = &code
		env.Data = data
		env.Status = mcp.StatusCompleted
		// No message: "exit code" in the text says it, and a completed
		// answer's JSON view carries only what the model acts on.
		fmt.Fprintf(&trailer, "---\nexit code: %d\ncwd: %s", code, o.Cwd)
		if o.ShellExited {
			trailer.WriteString("\nnote: the shell itself exited; the next command starts a new shell in the same directory")
		}
		if o.ShellReset {
			trailer.WriteString("\nnote: the shell did not respond to Ctrl-C and was replaced")
		}
	}
	if r.compact {
		// The client asked for the output alone; the status, exit code
		// and cwd are in structuredContent.
		return env.Result(strings.TrimSuffix(b.String(), "\n"))
	}
	b.WriteString(trailer.String())
	return env.Result(b.String())
}

// promptKind classifies the last line of a command's output, a prompt:
// the built-in recognizer first, then the configured one.
func (r *bashRun) promptKind(text string) guardian.TurnState {
	lines := strings.Split(text, "\n")
	if st := guardian.BuiltinTurnRecognizer().Classify(lines); st == guardian.TurnAwaitingApproval {
		return st
	}
	if r.recognizer != nil {
		last := lines[len(lines)-1:]
		return r.recognizer.Classify(last)
	}
	return guardian.TurnAwaitingInput
}

// sendText is the next action of a command waiting for input: the same
// target (the shell, or the background command).
func (r *bashRun) sendText(instruction string) *mcp.NextAction {
	act := map[string]any{"type": actSendText, "send_text": "<answer>", "submit": true}
	if r.act.BgCommandID != "" {
		act["bg_command_id"] = r.act.BgCommandID
	}
	return &mcp.NextAction{Tool: BashCommandTool, Instruction: instruction,
		Arguments: map[string]any{"action_json": act, "thread_id": r.threadID, "workspace_root": r.root}}
}

func (r *bashRun) background(id string) *mcp.CallToolResult {
	r.act.BgCommandID = id
	env := mcp.Envelope{
		Status: mcp.StatusRunning, Tool: BashCommandTool,
		Message:    "Started in the background as " + id + ".",
		Data:       bashData{BgCommandID: id},
		NextAction: r.statusCheck("Check on the background command later."),
	}
	return env.Result("Started background command " + id + "; the main shell stays free.")
}

func (r *bashRun) screen(snap guardian.ScreenSnapshot, diff bool) *mcp.CallToolResult {
	rows := snap.Rows
	if diff {
		// Changed indexes refer to the full screen; show them numbered.
		rows = make([]string, 0, len(snap.Changed))
		for _, i := range snap.Changed {
			if i < len(snap.Rows) {
				rows = append(rows, fmt.Sprintf("%d: %s", i+1, snap.Rows[i]))
			}
		}
	}
	// No message: the text is the screen. alt_screen only when it is on.
	data := bashData{Title: snap.Title, ChangedRows: snap.Changed}
	if snap.AltScreen {
		alt := true
		data.AltScreen = &alt
	}
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: BashCommandTool, Data: data}
	return env.Result(strings.TrimRight(strings.Join(rows, "\n"), "\n"))
}

func (r *bashRun) waitForTurn(ctx context.Context) *mcp.CallToolResult {
	quiet := time.Duration(defaultQuietMs) * time.Millisecond
	if r.act.QuietMs != nil {
		if *r.act.QuietMs < 1 || *r.act.QuietMs > 60000 {
			return bashFailure(&InputError{Msg: "quiet_ms must be between 1 and 60000"})
		}
		quiet = time.Duration(*r.act.QuietMs) * time.Millisecond
	}
	timeout := time.Duration(defaultTurnTimeout) * time.Second
	if r.act.TimeoutSeconds != nil {
		if *r.act.TimeoutSeconds < 0 || *r.act.TimeoutSeconds > maxWaitSeconds {
			return bashFailure(&InputError{Msg: "timeout_seconds must be between 0 and 600"})
		}
		timeout = time.Duration(*r.act.TimeoutSeconds * float64(time.Second))
	}
	rec := guardian.BuiltinTurnRecognizer()
	switch r.act.Recognizer {
	case "", "builtin":
	case "configurable":
		if r.recognizer == nil {
			return bashFailure(&InputError{Msg: "recognizer configurable needs WINX_TURN_RECOGNIZER_CONFIG set when the server starts"})
		}
		rec = r.recognizer
	default:
		return bashFailure(&InputError{Msg: fmt.Sprintf("recognizer %q is not one of builtin, configurable", r.act.Recognizer)})
	}
	deadline := time.Now().Add(timeout)
	var (
		ok   bool
		snap guardian.ScreenSnapshot
		st   guardian.TurnState
	)
	for {
		var err error
		ok, err = r.term.WaitForTurn(ctx, quiet, max(0, time.Until(deadline)))
		if err != nil {
			return r.failure(err)
		}
		snap = r.term.Screen(ctx, 0, false)
		st = rec.Classify(snap.Rows)
		if !ok || st != guardian.TurnBusy {
			break
		}
		// Quiet, but the program says it is working: wait on.
		left := time.Until(deadline)
		if left <= 0 {
			ok = false
			break
		}
		t := time.NewTimer(min(quiet, left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return bashFailure(ctx.Err())
		}
	}
	alt := snap.AltScreen
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: BashCommandTool, Message: "The terminal went quiet.",
		Data: bashData{AltScreen: &alt, Title: snap.Title, Quiet: &ok}}
	switch {
	case !ok:
		env.Status, env.Message = mcp.StatusRunning, "The terminal was still busy when the wait ended."
		env.NextAction = &mcp.NextAction{Tool: BashCommandTool, Instruction: "Wait again, or look at the screen.",
			Arguments: map[string]any{"action_json": map[string]any{"type": actWaitForTurn}, "thread_id": r.threadID, "workspace_root": r.root}}
	case st == guardian.TurnAwaitingApproval:
		env.Status, env.ErrorCode, env.Message = mcp.StatusAwaitingApproval, codeApprovalRequired, "The program asks for an approval (yes/no)."
		env.NextAction = r.sendText("Answer with send_text, or send_specials Ctrl-c.")
	case st == guardian.TurnAwaitingInput:
		env.Status, env.ErrorCode, env.Message = mcp.StatusAwaitingInput, codeInputRequired, "The program waits for input."
		env.NextAction = r.sendText("Type the input with send_text, or send_specials Ctrl-c.")
	}
	return env.Result(strings.TrimRight(strings.Join(snap.Rows, "\n"), "\n"))
}

// bashFailure maps session and input errors to the envelope.
func bashFailure(err error) *mcp.CallToolResult {
	var env mcp.Envelope
	switch {
	case errors.Is(err, guardian.ErrInvalidInput):
		env = mcp.Envelope{Status: mcp.StatusInvalidInput, Tool: BashCommandTool, ErrorCode: codeInvalidToolInput, Retryable: true,
			Message: "Invalid input: " + strings.TrimPrefix(err.Error(), "guardian: invalid input: ") + "."}
	case errors.Is(err, guardian.ErrUnknownBg):
		env = mcp.Envelope{Status: mcp.StatusNotFound, Tool: BashCommandTool, ErrorCode: codeCommandNotRunning, Retryable: true,
			Message: "There is no background command with that bg_command_id."}
	default:
		env = errorEnvelope(BashCommandTool, err)
	}
	return env.Result(env.Message)
}

// specialKeys are the keys send_specials understands, as documented.
var specialKeys = []string{"Enter", "Key-up", "Key-down", "Key-left", "Key-right", "Ctrl-c", "Ctrl-d", "Ctrl-z"}

// specialKey is the documented key k names, in any case and with "_" or
// "+" for "-" ("ctrl+C", "KEY_UP").
func specialKey(k string) (guardian.Key, bool) {
	norm := strings.NewReplacer("_", "-", "+", "-").Replace(k)
	for _, name := range specialKeys {
		if strings.EqualFold(norm, name) {
			return guardian.Key(name), true
		}
	}
	return "", false
}

// untilCompleteBackground answers a background command asked to run until
// complete: the two contradict each other, and the corrected call (the
// same arguments without wait_policy) starts it in the background.
func untilCompleteBackground(raw json.RawMessage) *mcp.CallToolResult {
	var args map[string]any
	_ = json.Unmarshal(raw, &args)
	delete(args, "wait_policy")
	env := mcp.Envelope{
		Status: mcp.StatusInvalidInput, Tool: BashCommandTool, ErrorCode: codeInvalidToolInput, Retryable: true,
		Message:    "Invalid input: wait_policy until_complete waits for a foreground command; a background command returns at once. Send the call without wait_policy (background) or without is_background (wait for it).",
		NextAction: &mcp.NextAction{Tool: BashCommandTool, Instruction: "Start the command in the background without wait_policy.", Arguments: args},
	}
	return env.Result(env.Message)
}

// personNoteLine is the one line an answer carries after a person typed in
// the session (guardian.Shell.TakePersonNote; redacted there).
func personNoteLine(note string) string {
	return "[winx: " + note + "]\n"
}

// personAttached answers an action refused because a person is attached to
// the session's terminal (winx attach --interactive): nothing was typed or
// started.
func (r *bashRun) personAttached() *mcp.CallToolResult {
	env := mcp.Envelope{
		Status: mcp.StatusConflict, Tool: BashCommandTool, ErrorCode: codePersonAttached, Retryable: true,
		Message: "A person is attached to this session's terminal and typing in it (winx attach --interactive); " +
			"nothing was typed or started. Wait until they detach, then check with status_check; " +
			"its answer says what they ran.",
		NextAction: r.statusCheck("Check again later; the action is refused while the person stays attached."),
	}
	return env.Result(env.Message)
}
