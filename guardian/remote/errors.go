package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"winx/guardian"
	"winx/guardian/wire"
	"winx/jsonrpc"
)

// CodeSession is the wire error code of every session failure; its data
// names the kind (see sessionKinds).
const CodeSession = -32010

// Sentinel errors of the remote session.
var (
	// ErrGuardianGone: the guardian process does not answer (killed,
	// exited, or replaced by another incarnation at the same socket).
	ErrGuardianGone = errors.New("remote: guardian is gone")
	// ErrStaleGeneration: the call named a generation that is no longer
	// the newest; nothing was done. It also matches guardian.ErrNotRunning.
	ErrStaleGeneration = errors.New("remote: stale command generation")
	// ErrLaunchCancelled: a run arrived after a cancel for its launch id;
	// it was not started.
	ErrLaunchCancelled = errors.New("remote: launch was cancelled before it started")
	// ErrNoLaunch: a cancel named a launch that started no command.
	ErrNoLaunch = errors.New("remote: the launch started no command")
	// ErrLaunchUnsettled: a launch in flight did not publish its
	// generation or fail within the settle timeout.
	ErrLaunchUnsettled = errors.New("remote: launch did not settle")
	// ErrTerminated: the guardian ended its session (a launch that could
	// not settle, or a close). It also matches guardian.ErrClosed.
	ErrTerminated = errors.New("remote: session terminated")
	// ErrUnsupported: the guardian's hello does not list the capability.
	ErrUnsupported = errors.New("remote: guardian lacks the capability")
	// ErrUnresponsive: the guardian did not answer a call within its
	// deadline. It also matches guardian.ErrUnresponsive.
	ErrUnresponsive = errors.New("remote: guardian does not answer")
)

// UnresponsiveError is a call the guardian did not answer within its
// deadline: the call's own wait plus a grace. The guardian may be stopped
// (SIGSTOP), hung or starved; unlike a *GuardianGoneError it is not
// sticky, since a stopped guardian may be continued.
type UnresponsiveError struct {
	Socket string
	Method string
	After  time.Duration // the deadline the call was given
}

func (e *UnresponsiveError) Error() string {
	return fmt.Sprintf("remote: guardian on %s did not answer %s within %v", e.Socket, e.Method, e.After)
}

func (e *UnresponsiveError) Unwrap() []error {
	return []error{ErrUnresponsive, guardian.ErrUnresponsive}
}

// GuardianGoneError is a guardian that cannot be reached any more.
type GuardianGoneError struct {
	Socket string
	// Replaced is set when another guardian incarnation answers at the
	// socket: the session this client knew is gone all the same.
	Replaced bool
	Err      error // the dial or connection failure; nil when Replaced
}

func (e *GuardianGoneError) Error() string {
	if e.Replaced {
		return "remote: guardian is gone: another guardian now serves " + e.Socket
	}
	return fmt.Sprintf("remote: guardian is gone: %s: %v", e.Socket, e.Err)
}
func (e *GuardianGoneError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrGuardianGone}
	}
	return []error{ErrGuardianGone, e.Err}
}

// SessionError is a session failure reported by the guardian. It unwraps
// to the sentinel of its kind, so callers test it exactly as they test the
// embedded session's errors (errors.Is(err, guardian.ErrCommandRunning)).
type SessionError struct {
	Kind    string
	Message string
}

func (e *SessionError) Error() string { return "remote: " + e.Message }
func (e *SessionError) Unwrap() []error {
	for _, k := range sessionKinds {
		if k.kind == e.Kind {
			return k.errs
		}
	}
	return nil
}

// sessionKinds maps kinds to sentinels, most specific first: toWireError
// picks the first kind whose first sentinel matches.
var sessionKinds = []struct {
	kind string
	errs []error
}{
	{"stale_generation", []error{ErrStaleGeneration, guardian.ErrNotRunning}},
	{"terminated", []error{ErrTerminated, guardian.ErrClosed}},
	{"launch_cancelled", []error{ErrLaunchCancelled}},
	{"no_launch", []error{ErrNoLaunch}},
	{"launch_unsettled", []error{ErrLaunchUnsettled}},
	{"person_attached", []error{guardian.ErrPersonAttached}},
	{"not_attached", []error{guardian.ErrNotAttached}},
	{"command_already_running", []error{guardian.ErrCommandRunning}},
	{"not_running", []error{guardian.ErrNotRunning}},
	{"invalid_input", []error{guardian.ErrInvalidInput}},
	{"unknown_background", []error{guardian.ErrUnknownBg}},
	{"closed", []error{guardian.ErrClosed}},
	{"shell_start", []error{guardian.ErrShellStart}},
}

type sessionErrorData struct {
	Kind string `json:"kind"`
}

// toWireError turns a session error into its wire form. Errors of no known
// kind become an internal error whose text stays in the guardian.
func toWireError(err error) error {
	for _, k := range sessionKinds {
		if errors.Is(err, k.errs[0]) {
			return jsonrpc.NewErrorWithData(CodeSession, err.Error(), sessionErrorData{Kind: k.kind})
		}
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "cancelled")
	}
	return err
}

// fromWireError turns what a call returned into the client's typed error.
func fromWireError(socket string, err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == CodeSession {
		var d sessionErrorData
		_ = json.Unmarshal(we.Data, &d)
		return &SessionError{Kind: d.Kind, Message: we.Message}
	}
	var de *wire.DialError
	if errors.As(err, &de) || errors.Is(err, wire.ErrConnectionLost) {
		return &GuardianGoneError{Socket: socket, Err: err}
	}
	return err
}
