package tools

import (
	"context"
	"encoding/json"
	"time"

	"winx/guardian"
	"winx/guardian/runtime"
)

// A shell may outlive the adapter (a guardian process of the daemon
// runtime): an adapter started later may attach to it, and then the
// session's mode must come back with it, as TOOLS.md's reattach promises.
// The mode is kept in the terminal's record (guardian.Terminal.Meta).

// recordModeTimeout bounds storing a mode with a shell; a failure only
// costs the next adapter the mode, so it never fails the call.
const recordModeTimeout = 5 * time.Second

// encodeMode and decodeMode are the record kept with a shell.
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
// a shell that served the session before brings its mode back unless the
// call asked for one; the mode in force is recorded with it.
func resumeMode(ctx context.Context, st *runtime.Started, asked Mode) (mode Mode, resumed bool) {
	mode, resumed = asked, st.Resumed
	if resumed && mode.Name == "" {
		if prior, ok := decodeMode(st.Terminal.Meta(ctx)); ok {
			mode = prior
		}
	}
	if mode.Name == "" {
		mode = Mode{Name: ModeWCGW}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordModeTimeout)
	st.Terminal.SetMeta(rctx, encodeMode(mode))
	cancel()
	return mode, resumed
}

// recordMode stores a changed mode with a shell.
func recordMode(sh guardian.Terminal, m Mode) {
	if sh == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordModeTimeout)
	defer cancel()
	sh.SetMeta(ctx, encodeMode(m))
}
