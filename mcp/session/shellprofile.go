package session

import (
	"context"
	"encoding/json"
	"fmt"

	"winx/auth/policy"
	"winx/guardian"
)

// A session's shell is started with the profile of its mode: restricted
// modes (code_writer, architect) neutralise the programs git would take
// from a repository's configuration, and architect runs the shell under
// the kernel's read-only ruleset where Landlock is available. A change of
// profile (a mode change, a new shell after a reset, a first shell started
// without it) starts a fresh shell at the same cwd (Terminal.Respawn), so
// nothing defined in the old one (aliases, functions, variables, traps)
// carries over into the stricter mode.
//
// The profile a shell runs with is part of the durable record kept with it
// (Terminal.Meta, next to the mode): a later adapter attaching to a guardian
// that still runs knows how its shell is confined, and a guardian spawned
// anew (the old one died, winxd started another) records none, so its shell
// is respawned with the mode's profile before it is used.

// ShellProfile is the shell profile of mode m: its kernel profile in the
// mode table (package auth/policy), in guardian's terms. An unknown mode has
// the default profile; its commands are all denied.
func ShellProfile(m policy.Mode) guardian.ShellProfile {
	spec, _ := m.Spec()
	var p guardian.ShellProfile
	if spec.Kernel.ReadOnly {
		p.Level = guardian.LevelReadOnly
	}
	if spec.Kernel.RestrictGit {
		p.Env = guardian.RestrictedGitEnv()
	}
	return p
}

// ShellState is how a session's current shell was started.
type ShellState struct {
	Profile     guardian.ShellProfile `json:"profile"`
	Confinement guardian.Confinement  `json:"confinement"`
}

// shellRecordKey is the key of the ShellState in the durable record, beside
// the mode's own fields.
const shellRecordKey = "winx_shell"

// encodeRecord is the durable record of a shell: the mode (EncodeMode) with
// the shell's state beside it.
func encodeRecord(m policy.Mode, st ShellState) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(EncodeMode(m), &fields) != nil || fields == nil {
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	fields[shellRecordKey] = b
	out, err := json.Marshal(fields)
	if err != nil {
		return nil
	}
	return out
}

// decodeShellState reads the shell state of a record; the zero state (the
// default profile) when it holds none.
func decodeShellState(raw json.RawMessage) ShellState {
	var rec struct {
		Shell *ShellState `json:"winx_shell"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &rec) != nil || rec.Shell == nil {
		return ShellState{}
	}
	return *rec.Shell
}

// fitShell gives sh the profile of mode m; known is the state its record
// gave, zero when it holds none. A shell without a record has the default
// profile: every other profile is given by a Respawn, and recorded after
// it. A shell whose profile differs is respawned with m's.
func fitShell(ctx context.Context, sh shell, m policy.Mode, known ShellState) (ShellState, error) {
	want := ShellProfile(m)
	if known.Profile.Equal(want) {
		return known, nil
	}
	conf, err := sh.Respawn(ctx, want)
	if err != nil {
		return ShellState{}, fmt.Errorf("session: start a shell for mode %s: %w", m.Name, err)
	}
	return ShellState{Profile: want, Confinement: conf}, nil
}

// ShellState returns how the session's current shell was started.
func (s *Session) ShellState() ShellState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shellState
}
