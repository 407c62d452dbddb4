package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"winx/auth/policy"
	"winx/guardian/runtime"
)

// A shell may outlive the adapter (a guardian process of the daemon
// runtime): an adapter started later may attach to it, and then the
// session's mode must come back with it, as docs/tools.md's reattach promises.
// The mode is kept in the terminal's record (guardian.Terminal.Meta).

// recordModeTimeout bounds storing a mode with a shell; a failure only
// costs the next adapter the mode, so it never fails the call.
const recordModeTimeout = 5 * time.Second

// ValidateMode reports a mode that is unknown or a code_writer mode whose
// configuration is malformed. It wraps ErrInvalidMode.
func ValidateMode(m policy.Mode) error {
	err := m.Validate()
	if err == nil {
		return nil
	}
	var ce *policy.ModeConfigError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w: %s", ErrInvalidMode, ce.Msg)
	}
	return fmt.Errorf("%w: %v", ErrInvalidMode, err)
}

// EncodeMode and DecodeMode are the record kept with a shell.
// DecodeMode reports false for a record that is absent, unnamed or invalid.
func EncodeMode(m policy.Mode) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// DecodeMode reads a record EncodeMode wrote (see EncodeMode).
func DecodeMode(raw json.RawMessage) (policy.Mode, bool) {
	var m policy.Mode
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m.Name == "" || ValidateMode(m) != nil {
		return policy.Mode{}, false
	}
	return m, true
}

// resumeMode settles the mode of a session whose first shell just started:
// a shell that served the session before brings its mode back unless the
// call asked for one, and the state of its shell.
func resumeMode(ctx context.Context, st *runtime.Started, asked policy.Mode) (mode policy.Mode, resumed bool, shell ShellState) {
	mode, resumed = asked, st.Resumed
	if resumed {
		meta := st.Terminal.Meta(ctx)
		if prior, ok := DecodeMode(meta); ok && mode.Name == "" {
			mode = prior
		}
		shell = decodeShellState(meta)
	}
	if mode.Name == "" {
		mode = policy.Mode{Name: policy.ModeWCGW}
	}
	return mode, resumed, shell
}

// recordShell stores a record (encodeRecord: a mode and its shell's state)
// with a shell; a failure only costs the next adapter the record, so it
// never fails the call.
func recordShell(sh shell, rec json.RawMessage) {
	if sh == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordModeTimeout)
	defer cancel()
	sh.SetMeta(ctx, rec)
}
