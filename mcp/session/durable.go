package tools

import (
	"context"
	"encoding/json"
	"time"
)

// durableShell is a shell that outlives the adapter (a guardian process of
// the daemon runtime): an adapter started later may attach to it, and then
// the session's mode must come back with it, as TOOLS.md's reattach promises.
type durableShell interface {
	// Resumed reports whether the shell served the session before this
	// adapter attached, and the mode recorded with it then (Name "" when
	// none was recorded).
	Resumed() (prior Mode, resumed bool)
	// RecordMode stores the session's mode with the shell.
	RecordMode(ctx context.Context, m Mode) error
}

// recordModeTimeout bounds storing a mode with a durable shell; a failure
// only costs the next adapter the mode, so it never fails the call.
const recordModeTimeout = 5 * time.Second

// encodeMode and decodeMode are the record kept with a durable shell.
func encodeMode(m Mode) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

func decodeMode(raw json.RawMessage) (Mode, bool) {
	var m Mode
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m.Name == "" || m.Validate() != nil {
		return Mode{}, false
	}
	return m, true
}

// resumeMode settles the mode of a session whose first shell just started:
// a durable shell that served the session before brings its mode back
// unless the call asked for one; the mode in force is recorded with it.
func resumeMode(ctx context.Context, sh Shell, asked Mode) (mode Mode, resumed bool) {
	mode = asked
	ds, ok := sh.(durableShell)
	if ok {
		var prior Mode
		if prior, resumed = ds.Resumed(); resumed && mode.Name == "" && prior.Name != "" {
			mode = prior
		}
	}
	if mode.Name == "" {
		mode = Mode{Name: ModeWCGW}
	}
	if ok {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordModeTimeout)
		ds.RecordMode(rctx, mode)
		cancel()
	}
	return mode, resumed
}

// recordMode stores a changed mode with a durable shell.
func recordMode(sh Shell, m Mode) {
	if ds, ok := sh.(durableShell); ok {
		ctx, cancel := context.WithTimeout(context.Background(), recordModeTimeout)
		defer cancel()
		ds.RecordMode(ctx, m)
	}
}
