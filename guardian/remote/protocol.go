package remote

import (
	"encoding/json"
	"time"

	"winx/guardian"
)

// Methods a guardian serves after the wire hello. Every call names what it
// targets: a foreground generation (0 means "the newest", used only by a
// client that has not learned one), a launch id, or a background id.
const (
	MethodAttach      = "session.attach"        // attachParams → Snapshot
	MethodStatus      = "session.status"        // reqBase → Status
	MethodRun         = "session.run"           // runParams → Outcome
	MethodPoll        = "session.poll"          // pollParams → Outcome
	MethodSendText    = "session.send_text"     // sendTextParams → Outcome
	MethodSendKeys    = "session.send_keys"     // sendKeysParams → Outcome
	MethodSendBytes   = "session.send_bytes"    // sendBytesParams → Outcome
	MethodCancel      = "session.cancel"        // cancelParams → Outcome
	MethodScreen      = "session.screen"        // screenParams → guardian.ScreenSnapshot
	MethodWaitForTurn = "session.wait_for_turn" // waitTurnParams → waitTurnResult
	MethodReset       = "session.reset"         // reqBase → Status
	MethodClose       = "session.close"         // reqBase → Status; the guardian then exits
	MethodRespawn     = "session.respawn"       // respawnParams → respawnResult
	MethodBgStart     = "background.start"      // bgStartParams → bgStartResult
	MethodBgPoll      = "background.poll"       // bgPollParams → Outcome
	MethodBgSendText  = "background.send_text"  // bgSendTextParams → Outcome
	MethodJobs        = "background.jobs"       // reqBase → JobsResult
	MethodHistory     = "session.history"       // reqBase → HistoryResult
	// A person's terminal (winx attach --interactive); see "People" in
	// the package doc.
	MethodPersonAttach = "person.attach" // personAttachParams → personAttachResult
	MethodPersonRead   = "person.read"   // personReadParams → personReadResult
	MethodPersonWrite  = "person.write"  // personWriteParams → struct{}
	MethodPersonResize = "person.resize" // personResizeParams → struct{}
	MethodPersonDetach = "person.detach" // personIDParams → struct{}
	// MethodAck is a notification: the client received the delivery
	// numbered Seq (see "Output delivery" in the package doc).
	MethodAck = "session.ack"
)

// Capabilities a guardian announces in its hello, beyond its method names.
const (
	CapDeliveryAck = "delivery_ack" // output is consumed when acknowledged
	CapLaunchID    = "launch_id"    // runs carry a launch id that cancel may name
	CapReplaceMeta = "replace_meta" // attach may replace the stored meta
)

// Capabilities is what this package's server announces.
func Capabilities() []string {
	return []string{
		MethodAttach, MethodStatus, MethodRun, MethodPoll, MethodSendText, MethodSendKeys,
		MethodSendBytes, MethodCancel, MethodScreen, MethodWaitForTurn, MethodReset, MethodClose,
		MethodBgStart, MethodBgPoll, MethodBgSendText, MethodJobs, MethodRespawn, MethodAck, CapDeliveryAck, CapLaunchID, CapReplaceMeta,
		MethodHistory,
		MethodPersonAttach, MethodPersonRead, MethodPersonWrite, MethodPersonResize, MethodPersonDetach,
	}
}

// reqBase is in every request: Ack acknowledges the delivery the client
// received last, in case its ack notification was lost or is still queued.
//
// ExpiresMS (Unix milliseconds) is when the client stops waiting for the
// answer. A guardian that reads the request only later (it was stopped
// while the request sat in its socket buffer) does not act on it: a call
// its client reported unresponsive never runs afterwards. Zero: no limit.
type reqBase struct {
	Ack       uint64 `json:"ack,omitempty"`
	ExpiresMS int64  `json:"expires_ms,omitempty"`
}

type attachParams struct {
	reqBase
	// Meta is stored when the guardian holds none yet (the first attach of
	// a session creates it), or always with ReplaceMeta; later attaches get
	// the stored value back.
	Meta        json.RawMessage `json:"meta,omitempty"`
	ReplaceMeta bool            `json:"replace_meta,omitempty"`
}

type runParams struct {
	reqBase
	Command  string `json:"command"`
	LaunchID string `json:"launch_id,omitempty"`
	WaitMS   int64  `json:"wait_ms"`
}

type pollParams struct {
	reqBase
	Generation uint64 `json:"generation"`
	WaitMS     int64  `json:"wait_ms"`
}

type sendTextParams struct {
	reqBase
	Generation uint64 `json:"generation"`
	Text       string `json:"text"`
	Submit     bool   `json:"submit,omitempty"`
	WaitMS     int64  `json:"wait_ms"`
}

type sendKeysParams struct {
	reqBase
	Generation uint64         `json:"generation"`
	Keys       []guardian.Key `json:"keys"`
	WaitMS     int64          `json:"wait_ms"`
}

type sendBytesParams struct {
	reqBase
	Generation uint64 `json:"generation"`
	Bytes      []byte `json:"bytes"` // base64 on the wire
	WaitMS     int64  `json:"wait_ms"`
}

// cancelParams names either a generation or the launch id of a run (whose
// generation the caller may not have learned).
type cancelParams struct {
	reqBase
	Generation uint64 `json:"generation,omitempty"`
	LaunchID   string `json:"launch_id,omitempty"`
	WaitMS     int64  `json:"wait_ms"`
}

type screenParams struct {
	reqBase
	Lines int  `json:"lines"`
	Diff  bool `json:"diff,omitempty"`
}

type waitTurnParams struct {
	reqBase
	QuietMS   int64 `json:"quiet_ms"`
	TimeoutMS int64 `json:"timeout_ms"`
}

type waitTurnResult struct {
	Quiet bool `json:"quiet"`
}

type bgStartParams struct {
	reqBase
	Command string `json:"command"`
}

type bgStartResult struct {
	ID string `json:"id"`
}

type bgPollParams struct {
	reqBase
	ID     string `json:"id"`
	WaitMS int64  `json:"wait_ms"`
}

type bgSendTextParams struct {
	reqBase
	ID     string `json:"id"`
	Text   string `json:"text"`
	Submit bool   `json:"submit,omitempty"`
	WaitMS int64  `json:"wait_ms"`
}

// JobsResult answers MethodJobs: the session's jobs (guardian.Shell.Jobs).
type JobsResult struct {
	Jobs []guardian.Job `json:"jobs"`
}

// HistoryResult answers MethodHistory: the session's last foreground
// commands, the most recent first (guardian.Shell.History).
type HistoryResult struct {
	Commands []guardian.CommandRun `json:"commands"`
}

// respawnParams asks for a fresh shell with Profile at the same cwd.
type respawnParams struct {
	reqBase
	Profile guardian.ShellProfile `json:"profile"`
}

type respawnResult struct {
	Status      Status               `json:"status"`
	Confinement guardian.Confinement `json:"confinement"`
}

type personAttachParams struct {
	reqBase
	Rows int `json:"rows,omitempty"`
	Cols int `json:"cols,omitempty"`
}

type personAttachResult struct {
	ID     string `json:"id"`
	Offset uint64 `json:"offset"`
}

type personIDParams struct {
	reqBase
	ID string `json:"id"`
}

type personReadParams struct {
	reqBase
	ID     string `json:"id"`
	Offset uint64 `json:"offset"`
	WaitMS int64  `json:"wait_ms"`
}

type personReadResult struct {
	Data        []byte `json:"data,omitempty"` // base64 on the wire
	Offset      uint64 `json:"offset"`
	Dropped     uint64 `json:"dropped,omitempty"`
	ShellExited bool   `json:"shell_exited,omitempty"`
}

type personWriteParams struct {
	reqBase
	ID   string `json:"id"`
	Data []byte `json:"data"` // base64 on the wire
}

type personResizeParams struct {
	reqBase
	ID   string `json:"id"`
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
}

type ackParams struct {
	Seq uint64 `json:"seq"`
}

// Outcome is guardian.Outcome on the wire, plus the delivery number to
// acknowledge (0 when the outcome carried no output).
type Outcome struct {
	Generation  uint64 `json:"generation"`
	Command     string `json:"command"`
	Running     bool   `json:"running"`
	ExitCode    int    `json:"exit_code"`
	Cwd         string `json:"cwd"`
	ElapsedNS   int64  `json:"elapsed_ns"`
	Output      Shaped `json:"output"`
	ShellExited bool   `json:"shell_exited,omitempty"`
	ShellReset  bool   `json:"shell_reset,omitempty"`
	Seq         uint64 `json:"seq,omitempty"`
	// AwaitingInput: the command is blocked reading its terminal.
	AwaitingInput bool `json:"awaiting_input,omitempty"`
	// PersonNote: a person typed in the session since the agent's last
	// answer (guardian.Shell.TakePersonNote).
	PersonNote string `json:"person_note,omitempty"`
}

// Shaped is guardian.Shaped on the wire.
type Shaped struct {
	Text         string `json:"text"`
	DroppedBytes int    `json:"dropped_bytes,omitempty"`
	DroppedLines int    `json:"dropped_lines,omitempty"`
	DroppedFile  string `json:"dropped_file,omitempty"`
	Collapsed    int    `json:"collapsed,omitempty"`
	Redactions   int    `json:"redactions,omitempty"`
	Journal      string `json:"journal,omitempty"`
	LostLines    int    `json:"lost_lines,omitempty"`
	LostBytes    int64  `json:"lost_bytes,omitempty"`
	Open         bool   `json:"open,omitempty"`
}

func toWire(o *guardian.Outcome, seq uint64) *Outcome {
	s := o.Output
	return &Outcome{
		Generation: o.Generation, Command: o.Command, Running: o.Running, ExitCode: o.ExitCode,
		Cwd: o.Cwd, ElapsedNS: int64(o.Elapsed), ShellExited: o.ShellExited, ShellReset: o.ShellReset, Seq: seq, AwaitingInput: o.AwaitingInput,
		PersonNote: o.PersonNote,
		Output: Shaped{Text: s.Text, DroppedBytes: s.DroppedBytes, DroppedLines: s.DroppedLines,
			DroppedFile: s.DroppedFile, Collapsed: s.Collapsed, Redactions: s.Redactions,
			Journal: s.Journal, LostLines: s.LostLines, LostBytes: s.LostBytes, Open: s.Open},
	}
}

// Guardian converts the wire outcome back.
func (o *Outcome) Guardian() *guardian.Outcome {
	s := o.Output
	return &guardian.Outcome{
		Generation: o.Generation, Command: o.Command, Running: o.Running, ExitCode: o.ExitCode,
		Cwd: o.Cwd, Elapsed: time.Duration(o.ElapsedNS), ShellExited: o.ShellExited, ShellReset: o.ShellReset,
		AwaitingInput: o.AwaitingInput, PersonNote: o.PersonNote,
		Output: guardian.Shaped{Text: s.Text, DroppedBytes: s.DroppedBytes, DroppedLines: s.DroppedLines,
			DroppedFile: s.DroppedFile, Collapsed: s.Collapsed, Redactions: s.Redactions,
			Journal: s.Journal, LostLines: s.LostLines, LostBytes: s.LostBytes, Open: s.Open},
	}
}

// Status is the guardian's state without output: what winxd needs for
// quotas and TTL sweeps, and what a client needs to know it is healthy.
type Status struct {
	Key      string `json:"key"`
	ShellPID int    `json:"shell_pid"`
	Cwd      string `json:"cwd"`
	// Activity clocks. LastActivity moves on every call but status (a
	// sweep looking must not keep a session alive) and ack.
	Created        time.Time `json:"created"`
	LastActivity   time.Time `json:"last_activity"`
	LastCommand    time.Time `json:"last_command,omitzero"`
	EverRanCommand bool      `json:"ever_ran_command"`
	// Generation is the newest foreground generation (0 before the first
	// command); Running says whether it still runs.
	Generation uint64 `json:"generation"`
	Running    bool   `json:"running"`
	Command    string `json:"command,omitempty"`
	// Background lists the background commands started through this
	// guardian; BackgroundRunning counts those still running.
	Background        []string `json:"background,omitempty"`
	BackgroundRunning int      `json:"background_running"`
	Closed            bool     `json:"closed,omitempty"`
	// ShellStartupMS is how long the current shell took from its spawn to
	// its first ready prompt, mostly the user's rc file ShellRC; an older
	// guardian sends neither.
	ShellStartupMS int64  `json:"shell_startup_ms,omitempty"`
	ShellRC        string `json:"shell_rc,omitempty"`
}

// Snapshot is the authoritative state an attaching client starts from.
type Snapshot struct {
	Status
	// Foreground is the newest foreground command with the output no
	// client has acknowledged yet; nil before the first command. Its
	// output stays pending: the next poll of that generation delivers it
	// again, so nothing is lost if the attaching client shows it or not.
	Foreground *Outcome `json:"foreground,omitempty"`
	// Meta is the opaque value the first attach stored (the adapter keeps
	// the session mode there).
	Meta json.RawMessage `json:"meta,omitempty"`
}
