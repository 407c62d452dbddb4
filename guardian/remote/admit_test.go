package remote

import (
	"errors"
	"testing"

	"winx/guardian/wire"
)

// TestGuardianAdmission is the guardian's rule table: its own session's
// processes are refused when the session is a sandbox or its shell is
// read-only; any caller confined beyond the guardian is refused; the rest
// (winxd, adapters, an unrestricted session's programs) are served.
func TestGuardianAdmission(t *testing.T) {
	const self = 100
	none := wire.Confinement{}
	nnp := wire.Confinement{NoNewPrivs: true}
	filtered := wire.Confinement{NoNewPrivs: true, Seccomp: 2, SeccompFilters: 1}
	inside := []int{150, 120, self, 10, 1} // a process of the session
	outside := []int{90, 10, 1}            // an adapter, winxd
	tests := []struct {
		name     string
		sandbox  bool
		readOnly bool
		conf     wire.Confinement // the guardian's
		peer     wire.PeerProcess
		refused  bool
	}{
		{name: "wcgw program", peer: wire.PeerProcess{Ancestors: inside}},
		{name: "adapter", sandbox: true, readOnly: true, peer: wire.PeerProcess{Ancestors: outside}},
		{name: "sandbox program", sandbox: true, peer: wire.PeerProcess{Ancestors: inside}, refused: true},
		{name: "architect program", readOnly: true, peer: wire.PeerProcess{Ancestors: inside}, refused: true},
		// The launcher's no_new_privs is missing: the ancestry still tells.
		{name: "architect program without no_new_privs", readOnly: true, peer: wire.PeerProcess{Ancestors: inside, Confinement: none}, refused: true},
		// Another session's confined program, or a confined job left over
		// after the shell was respawned unrestricted.
		{name: "confined caller from elsewhere", peer: wire.PeerProcess{Ancestors: outside, Confinement: nnp}, refused: true},
		{name: "confined job of a now unrestricted session", peer: wire.PeerProcess{Ancestors: inside, Confinement: nnp}, refused: true},
		{name: "a filter more than the guardian", conf: nnp, peer: wire.PeerProcess{Ancestors: outside, Confinement: filtered}, refused: true},
		// Everything under a confined guardian (a container) is as
		// confined: its adapters and winxd are served.
		{name: "as confined as the guardian", conf: filtered, peer: wire.PeerProcess{Ancestors: outside, Confinement: filtered}},
		{name: "broken chain, unconfined", peer: wire.PeerProcess{Ancestors: []int{150}}},
		{name: "broken chain, confined", readOnly: true, peer: wire.PeerProcess{Ancestors: []int{150}, Confinement: nnp}, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission{self: self, conf: tt.conf, sandbox: tt.sandbox, readOnly: func() bool { return tt.readOnly }}
			peer := tt.peer
			err := a.admit(&peer)
			var ce *wire.ConfinedPeerError
			if tt.refused != (err != nil) || (err != nil && !errors.As(err, &ce)) {
				t.Errorf("admit(%+v) = %v, want refused %v (a *wire.ConfinedPeerError)", tt.peer, err, tt.refused)
			}
		})
	}
}
