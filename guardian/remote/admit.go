package remote

import (
	"fmt"
	"log/slog"
	"os"

	"winx/guardian/wire"
)

// admission is a guardian's judge of the processes that connect to it
// (wire.ServeOptions.Admit), run once per connection at its hello, after
// the secret. The secret alone is not enough: a program inside a confined
// session that got it (a repository's filter program run by an allowed
// git status in architect, reading a secret file the sandbox failed to
// hide) must still drive nothing.
//
// It refuses every method, session.status included: a confined caller has
// no use for the wire, and a rule with no exception has no exception to
// get wrong. Two rules:
//
//   - A caller that descends from this guardian, when its session is a
//     sandbox (-sandbox) or its shell's profile is read-only (architect).
//     Every process of the session descends from the guardian: its shells
//     (each incarnation: reset, respawn), their commands and background
//     jobs, and the orphans among them, double-forked and setsid'd daemons
//     included, which are reparented to the guardian because it is the
//     session's subreaper. The walk up from the caller stops at the first
//     process without a parent, so this guardian's pid on the chain is the
//     anchor.
//   - A caller confined beyond this guardian (no_new_privs where the
//     guardian has none, a stricter seccomp mode or more seccomp filters),
//     wherever it runs: a confined session's launcher sets both for every
//     process of the session, which cannot drop them, so this catches a
//     confined program reaching another guardian, a confined job that
//     outlived its read-only shell (respawned unrestricted), and one whose
//     ancestry could not be followed.
//
// What is unaffected: winxd and the adapters do not descend from a
// guardian (winxd spawns it; an adapter reaches it through winxd) and run
// as confined as the guardian, which inherits winxd's confinement. An
// unrestricted (wcgw) session of an unconfined guardian keeps today's
// behaviour: its programs could read the secret and do what the wire
// allows anyway, so refusing them would protect nothing. A winx started
// inside a session, with its own runtime directory, runs its own winxd and
// guardians: they descend from this guardian, but they are the server
// there, not the caller, and its adapter connects to them, not to this
// guardian.
type admission struct {
	self    int              // this guardian's pid: the anchor of its session
	conf    wire.Confinement // this guardian's own confinement
	sandbox bool             // the session is confined (-sandbox)
	// readOnly reports the session's current shell profile.
	readOnly func() bool
}

// newAdmission reads this process's confinement. If its status cannot be
// read it judges as an unconfined guardian, which refuses more callers,
// never fewer.
func newAdmission(sandbox bool, readOnly func() bool, logger *slog.Logger) *admission {
	a := &admission{self: os.Getpid(), sandbox: sandbox, readOnly: readOnly}
	conf, err := wire.Proc{}.Confinement(a.self)
	if err != nil {
		logger.Warn("own confinement unreadable: judging callers as an unconfined guardian", "err", err)
	}
	a.conf = conf
	return a
}

// admit implements wire.AdmitFunc.
func (a *admission) admit(p *wire.PeerProcess) error {
	if p.DescendsFrom(a.self) {
		switch {
		case a.sandbox:
			return &wire.ConfinedPeerError{Reason: "it runs inside this guardian's sandboxed session"}
		case a.readOnly():
			return &wire.ConfinedPeerError{Reason: "it runs inside this guardian's session, whose shell is read-only"}
		}
	}
	if p.Confinement.MoreThan(a.conf) {
		return &wire.ConfinedPeerError{Reason: fmt.Sprintf("it is confined beyond this guardian (%s; the guardian %s)", p.Confinement, a.conf)}
	}
	return nil
}
