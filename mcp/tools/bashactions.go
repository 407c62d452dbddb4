package tools

// The BashCommand actions, one row each.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"winx/auth/policy"
	"winx/guardian"
	"winx/mcp"
)

// Action types of BashCommand (docs/tools.md, "BashCommand").
const (
	actCommand      = "command"
	actStatusCheck  = "status_check"
	actSendText     = "send_text"
	actSendSpecials = "send_specials"
	actSendASCII    = "send_ascii"
	actScreen       = "screen"
	actWaitForTurn  = "wait_for_turn"
	actJobs         = "jobs"
)

// action is one BashCommand action, tagged by Type: the union of the
// fields the rows of the action table below own; decoding is strict over
// that union (decodeArguments), so a new row adds its fields here.
type action struct {
	Type            string   `json:"type"`
	Command         *string  `json:"command"`
	IsBackground    bool     `json:"is_background"`
	AllowMulti      bool     `json:"allow_multi"`
	BgCommandID     string   `json:"bg_command_id"`
	ScrollbackLines *int     `json:"scrollback_lines"`
	Verbose         bool     `json:"verbose"`
	SendText        *string  `json:"send_text"`
	Submit          bool     `json:"submit"`
	SendSpecials    []string `json:"send_specials"`
	SendASCII       []int    `json:"send_ascii"`
	Lines           *int     `json:"lines"`
	Diff            bool     `json:"diff"`
	Recognizer      string   `json:"recognizer"`
	QuietMs         *int     `json:"quiet_ms"`
	TimeoutSeconds  *float64 `json:"timeout_seconds"`
}

// actionField is one key of action_json: its JSON schema text and whether
// its presence implies the row's type when type is missing.
type actionField struct {
	key     string
	schema  string
	implies bool
}

// modeInput is what an action puts before the session's mode (bashGate):
// nothing, a command line, text typed into the foreground, or keys.
type modeInput struct {
	kind modeInputKind
	text string   // the line, or the typed text (inputLine, inputTyped)
	keys []string // the key names (inputKeys)
}

type modeInputKind int

const (
	inputNone modeInputKind = iota
	inputLine
	inputTyped
	inputKeys
)

// actionSpec is one BashCommand action. The struct action above holds
// every field of every row; a row lists the fields it owns, in the
// schema's order.
type actionSpec struct {
	typ    string
	fields []actionField
	// mode says what the mode must allow before the action runs; nil for
	// an action that only looks.
	mode func(a *action) modeInput
	// run performs the action on the terminal.
	run func(r *bashRun, ctx context.Context) *mcp.CallToolResult
}

// actionTable lists the actions in the schema's order; the fields of all
// rows, in order, are action_json's properties after type. Adding an action
// is one row. Read only through lookupAction and the schema builder.
var actionTable = [...]actionSpec{
	{typ: actCommand, fields: []actionField{
		{"command", `{"type": "string", "description": "the shell command line"}`, true},
		{"is_background", `{"type": "boolean", "description": "own PTY; returns a bg_command_id at once"}`, false},
		{"allow_multi", `{"type": "boolean", "description": "accepted, ignored"}`, false},
	}, mode: commandModeInput, run: (*bashRun).runCommand},
	{typ: actStatusCheck, fields: []actionField{
		{"bg_command_id", `{"type": "string", "description": "target a background command"}`, true},
		{"scrollback_lines", `{"type": "integer", "minimum": 0, "description": "accepted, ignored"}`, true},
		{"verbose", `{"type": "boolean", "description": "accepted, ignored"}`, false},
	}, run: (*bashRun).runStatusCheck},
	{typ: actSendText, fields: []actionField{
		{"send_text", `{"type": "string", "description": "text to type"}`, true},
		{"submit", `{"type": "boolean", "description": "press Enter after it"}`, false},
	}, mode: sendTextModeInput, run: (*bashRun).runSendText},
	{typ: actSendSpecials, fields: []actionField{
		{"send_specials", `{"type": "array", "items": {"type": "string"}, "description": "Enter, Key-up/down/left/right, Ctrl-c, Ctrl-d (EOF), Ctrl-z; any case"}`, true},
	}, mode: sendSpecialsModeInput, run: (*bashRun).runSendSpecials},
	{typ: actSendASCII, fields: []actionField{
		{"send_ascii", `{"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 255}}`, true},
	}, mode: sendASCIIModeInput, run: (*bashRun).runSendASCII},
	{typ: actScreen, fields: []actionField{
		{"lines", `{"type": "integer", "minimum": 0, "description": "screen: the last N written rows (0 = all)"}`, true},
		{"diff", `{"type": "boolean", "description": "only rows changed since the last look"}`, true},
	}, run: (*bashRun).runScreen},
	{typ: actWaitForTurn, fields: []actionField{
		{"recognizer", `{"enum": ["builtin", "configurable"], "description": "configurable: WINX_TURN_RECOGNIZER_CONFIG"}`, true},
		{"quiet_ms", `{"type": "integer", "minimum": 1, "description": "default 600"}`, true},
		{"timeout_seconds", `{"type": "number", "minimum": 0, "description": "default 30"}`, true},
	}, run: (*bashRun).waitForTurn},
	{typ: actJobs, run: (*bashRun).runJobs},
}

// lookupAction returns the row of action type typ.
func lookupAction(typ string) (actionSpec, bool) {
	for _, s := range actionTable {
		if s.typ == typ {
			return s, true
		}
	}
	return actionSpec{}, false
}

// actionTypeNames lists the action types in table order.
func actionTypeNames() []string {
	names := make([]string, len(actionTable))
	for i, s := range actionTable {
		names[i] = s.typ
	}
	return names
}

// impliedAction is the type the key implies when type is missing; "" when
// it implies none.
func impliedAction(key string) string {
	for _, s := range actionTable {
		for _, f := range s.fields {
			if f.key == key && f.implies {
				return s.typ
			}
		}
	}
	return ""
}

// actionSchemaProperties is action_json's object properties, built from the
// table, each line indented as bashSchema holds it.
func actionSchemaProperties() string {
	const indent = "            "
	var b strings.Builder
	b.WriteString(indent + `"type": {"type": "string", "enum": ["` + strings.Join(actionTypeNames(), `", "`) + `"]}`)
	for _, s := range actionTable {
		for _, f := range s.fields {
			b.WriteString(",\n" + indent + `"` + f.key + `": ` + f.schema)
		}
	}
	return b.String()
}

// The mode inputs of the rows (bashGate). Typed text and keys aimed at a
// background command reach that command's own terminal, not the shell's
// prompt, and are not checked.

func commandModeInput(a *action) modeInput {
	if a.Command == nil {
		return modeInput{}
	}
	return modeInput{kind: inputLine, text: *a.Command}
}

func sendTextModeInput(a *action) modeInput {
	if a.SendText == nil || a.BgCommandID != "" {
		return modeInput{}
	}
	text := *a.SendText
	if a.Submit {
		text += "\r"
	}
	return modeInput{kind: inputTyped, text: text}
}

func sendASCIIModeInput(a *action) modeInput {
	if a.BgCommandID != "" {
		return modeInput{}
	}
	b := make([]byte, 0, len(a.SendASCII))
	for _, v := range a.SendASCII {
		b = append(b, byte(min(max(v, 0), 0xff)))
	}
	return modeInput{kind: inputTyped, text: string(b)}
}

func sendSpecialsModeInput(a *action) modeInput {
	if a.BgCommandID != "" {
		return modeInput{}
	}
	return modeInput{kind: inputKeys, keys: a.SendSpecials}
}

func (r *bashRun) runCommand(ctx context.Context) *mcp.CallToolResult {
	a := r.act
	if a.Command == nil || strings.TrimSpace(*a.Command) == "" {
		return bashFailure(&InputError{Msg: "command is empty"})
	}
	cmd := *a.Command
	if a.IsBackground {
		id, err := r.term.StartBackground(ctx, cmd)
		if err != nil {
			return r.failure(err)
		}
		return r.background(id)
	}
	if dropped, ok := policy.DropTailPipe(cmd); ok && !r.keepTailPipe {
		r.droppedTail = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd[len(dropped):]), "|"))
		cmd = dropped
	}
	o, err := r.runForeground(ctx, cmd)
	if err == nil && r.memo != nil {
		r.memo.started(cmd)
	}
	return r.outcome(ctx, o, err)
}

func (r *bashRun) runStatusCheck(ctx context.Context) *mcp.CallToolResult {
	a := r.act
	if a.BgCommandID != "" {
		o, err := r.term.PollBackground(ctx, a.BgCommandID, r.wait)
		return r.outcome(ctx, o, err)
	}
	o, err := r.term.Poll(ctx, 0, r.wait)
	if err == nil && r.memo != nil && r.memo.alreadyReported(o) {
		err = guardian.ErrNotRunning
	}
	return r.outcome(ctx, o, err)
}

func (r *bashRun) runSendText(ctx context.Context) *mcp.CallToolResult {
	a := r.act
	if a.SendText == nil || *a.SendText == "" {
		return bashFailure(&InputError{Msg: "send_text must not be empty"})
	}
	if a.BgCommandID != "" {
		o, err := r.term.SendTextBackground(ctx, a.BgCommandID, *a.SendText, a.Submit, r.wait)
		return r.outcome(ctx, o, err)
	}
	o, err := r.term.SendText(ctx, *a.SendText, a.Submit, r.wait)
	if errors.Is(err, guardian.ErrNotRunning) {
		text := *a.SendText
		if a.Submit {
			text += "\r"
		}
		return r.typeAtPrompt(ctx, text)
	}
	return r.outcome(ctx, o, err)
}

func (r *bashRun) runSendSpecials(ctx context.Context) *mcp.CallToolResult {
	a := r.act
	keys := make([]guardian.Key, len(a.SendSpecials))
	for i, k := range a.SendSpecials {
		key, ok := specialKey(k)
		if !ok {
			return bashFailure(&InputError{Msg: fmt.Sprintf("send_specials: unknown key %q; the keys are %s (any case)", k, strings.Join(specialKeys, ", "))})
		}
		keys[i] = key
	}
	if a.BgCommandID != "" {
		// The keys go to that command's own terminal: its line
		// discipline turns Ctrl-c into SIGINT for it, not for the shell.
		seq, err := guardian.KeySequence(keys)
		if err != nil {
			return r.failure(err)
		}
		o, err := r.term.SendTextBackground(ctx, a.BgCommandID, string(seq), false, r.wait)
		return r.outcome(ctx, o, err)
	}
	o, err := r.term.SendKeys(ctx, keys, r.wait)
	return r.outcome(ctx, o, err)
}

func (r *bashRun) runSendASCII(ctx context.Context) *mcp.CallToolResult {
	a := r.act
	b := make([]byte, len(a.SendASCII))
	for i, v := range a.SendASCII {
		if v < 1 || v > 255 {
			return bashFailure(&InputError{Msg: fmt.Sprintf("send_ascii values must be 1..255, got %d", v)})
		}
		b[i] = byte(v)
	}
	o, err := r.term.SendBytes(ctx, b, r.wait)
	if errors.Is(err, guardian.ErrNotRunning) {
		return r.typeAtPrompt(ctx, string(b))
	}
	return r.outcome(ctx, o, err)
}

func (r *bashRun) runScreen(ctx context.Context) *mcp.CallToolResult {
	a := r.act
	lines := 0
	if a.Lines != nil {
		if *a.Lines < 0 || *a.Lines > maxScreenLineOption {
			return bashFailure(&InputError{Msg: "lines must be between 0 and 1000"})
		}
		lines = *a.Lines
	}
	if lines > 0 && !a.Diff {
		// Count from the last row that holds something: the rows
		// below the prompt are blank and would fill the answer.
		snap := r.term.Screen(ctx, 0, false)
		rows := snap.Rows
		for len(rows) > 0 && strings.TrimSpace(rows[len(rows)-1]) == "" {
			rows = rows[:len(rows)-1]
		}
		snap.Rows = rows[max(0, len(rows)-lines):]
		return r.screen(snap, false)
	}
	return r.screen(r.term.Screen(ctx, lines, a.Diff), a.Diff)
}

func (r *bashRun) runJobs(ctx context.Context) *mcp.CallToolResult {
	jobs, err := r.term.Jobs(ctx)
	if err != nil {
		return r.failure(err)
	}
	return r.jobs(jobs, time.Now())
}
