package daemon

import (
	"fmt"
	"os"

	"winx/guardian/remote"
	"winx/guardian/wire"
)

// ownGuardian is one of this winxd's guardians as its admission sees it,
// from the record the guardian keeps beside its socket in winxd's socket
// directory: the guardians it spawned, and those it found there after a
// restart.
type ownGuardian struct {
	Sandbox bool // the guardian confines its session
}

// admission is winxd's judge of the processes that connect to it
// (wire.ServeOptions.Admit), run once per connection at its hello, after
// the secret, so the secret alone does not let a confined session's
// program ask for an unconfined session. What happens, in order:
//
//  1. A caller confined beyond winxd itself (no_new_privs where winxd has
//     none, a stricter seccomp mode or more seccomp filters) is refused.
//     This is the fallback for a broken chain: a process of a confined
//     session whose guardian died was reparented to init, so no guardian
//     is on its chain any more, but the launcher's no_new_privs and
//     seccomp filters stay with it. It holds whatever the chain says:
//     winxd's guardians inherit its confinement, so for a guardian it
//     spawned this is the same comparison as rule 3; it refuses more only
//     for a guardian confined beyond winxd (started by an earlier, more
//     confined winxd), whose callers must not reach a less confined one.
//     And a record whose pid the kernel reused can then only add a
//     refusal, never lift one.
//  2. Otherwise the caller's ancestry is walked up, nearest first, to the
//     first process that is one of this winxd's guardians. When that
//     guardian's session is a sandbox, the caller is refused.
//  3. When the caller is confined beyond that guardian (an architect
//     shell's processes: the read-only launcher sets no_new_privs), it is
//     refused.
//  4. Everything else is admitted: the adapters (no guardian of this
//     winxd on their chain) and the programs of an unrestricted (wcgw)
//     session of an unconfined guardian. Those keep today's behaviour on
//     purpose: such a program can read the secret and the user's files
//     and run anything as the user, so refusing it would protect nothing.
//
// A winx started inside a session with its own runtime directory is not
// affected: its winxd's own guardians are those of its own socket
// directory, the first such guardian on a caller's chain decides, and the
// outer session's guardian (further up the chain) is not one of them. Its
// adapter has none of them on its chain and runs as confined as its winxd,
// which it started.
type admission struct {
	conf wire.Confinement // winxd's own
	proc wire.Proc
	// guardians reads the current guardians of the socket directory,
	// keyed by pid. It runs once per connection that passed rule 1.
	guardians func() map[int]ownGuardian
}

// admit implements wire.AdmitFunc.
func (a *admission) admit(p *wire.PeerProcess) error {
	if p.Confinement.MoreThan(a.conf) {
		return &wire.ConfinedPeerError{Reason: fmt.Sprintf("it is confined beyond winxd (%s; winxd %s)", p.Confinement, a.conf)}
	}
	own := a.guardians()
	for _, pid := range p.Ancestors {
		g, ok := own[pid]
		if !ok {
			continue
		}
		if g.Sandbox {
			return &wire.ConfinedPeerError{Reason: fmt.Sprintf("it runs inside the sandboxed session of guardian %d", pid)}
		}
		gc, err := a.proc.Confinement(pid)
		if err != nil {
			// The guardian exited meanwhile: rule 1 has judged the
			// caller as if its chain were broken.
			return nil
		}
		if p.Confinement.MoreThan(gc) {
			return &wire.ConfinedPeerError{Reason: fmt.Sprintf("it runs inside a confined session of guardian %d (%s; the guardian %s)", pid, p.Confinement, gc)}
		}
		return nil
	}
	return nil
}

// newAdmission returns the admission of a winxd serving the guardians of
// fleet. If winxd's own status cannot be read it judges as an unconfined
// winxd, which refuses more callers, never fewer.
func (s *Server) newAdmission() *admission {
	a := &admission{guardians: s.ownGuardians}
	conf, err := a.proc.Confinement(os.Getpid())
	if err != nil {
		s.log.Warn("own confinement unreadable: judging callers as an unconfined winxd", "err", err)
	}
	a.conf = conf
	return a
}

// ownGuardians reads the records of the guardian sockets of the directory.
// A record that cannot be read names no guardian: rule 1 of admission
// still judges its session's callers.
func (s *Server) ownGuardians() map[int]ownGuardian {
	socks, err := s.ops.Sockets()
	if err != nil {
		s.log.Warn("list guardians for an admission", "err", err)
		return nil
	}
	own := make(map[int]ownGuardian, len(socks))
	for _, so := range socks {
		r, err := remote.ReadRecord(so)
		if err != nil || r.PID <= 0 {
			continue
		}
		own[r.PID] = ownGuardian{Sandbox: r.Sandbox || keySandboxed(r.Key)}
	}
	return own
}
