package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"winx/guardian/wire"
)

// TestDaemonAdmission is winxd's rule table: a caller confined beyond winxd
// is refused wherever it runs; otherwise the first of winxd's own
// guardians on its chain decides: a sandbox refuses, so does a guardian
// less confined than the caller; no own guardian on the chain (an
// adapter, a nested winx's adapter, a broken chain) admits.
func TestDaemonAdmission(t *testing.T) {
	none := wire.Confinement{}
	nnp := wire.Confinement{NoNewPrivs: true}
	filtered := wire.Confinement{NoNewPrivs: true, Seccomp: 2, SeccompFilters: 1}
	// A fake /proc with the guardians' status: 200 unconfined, 300 with
	// no_new_privs (started by an earlier, confined winxd).
	root := t.TempDir()
	for pid, status := range map[int]string{200: "NoNewPrivs:\t0\n", 300: "NoNewPrivs:\t1\n", 400: "NoNewPrivs:\t0\n"} {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte("Name:\twinx-guardian\n"+status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	own := map[int]ownGuardian{200: {}, 300: {}, 400: {Sandbox: true}, 500: {}} // 500: its record outlived it
	tests := []struct {
		name    string
		conf    wire.Confinement // winxd's
		peer    wire.PeerProcess
		refused bool
	}{
		{name: "adapter", peer: wire.PeerProcess{Ancestors: []int{50, 1}}},
		{name: "wcgw program", peer: wire.PeerProcess{Ancestors: []int{210, 200, 20, 1}}},
		{name: "architect program", peer: wire.PeerProcess{Ancestors: []int{210, 200, 20, 1}, Confinement: nnp}, refused: true},
		{name: "sandbox program", peer: wire.PeerProcess{Ancestors: []int{410, 400, 20, 1}}, refused: true},
		// Its guardian died: reparented to init, its confinement stays.
		{name: "orphan of a confined session", peer: wire.PeerProcess{Ancestors: []int{1}, Confinement: nnp}, refused: true},
		{name: "orphan of an unrestricted session", peer: wire.PeerProcess{Ancestors: []int{1}}},
		// A confined caller under a guardian as confined as itself is still
		// refused by a less confined winxd.
		{name: "under a confined guardian", peer: wire.PeerProcess{Ancestors: []int{310, 300, 1}, Confinement: nnp}, refused: true},
		{name: "winxd as confined", conf: nnp, peer: wire.PeerProcess{Ancestors: []int{310, 300, 1}, Confinement: nnp}},
		{name: "a filter more under a confined winxd", conf: nnp, peer: wire.PeerProcess{Ancestors: []int{310, 300, 1}, Confinement: filtered}, refused: true},
		// A nested winx's guardian (not in this winxd's directory) sits
		// between the caller and this winxd's wcgw guardian: the nearest
		// own guardian decides.
		{name: "nested winx in a wcgw session", peer: wire.PeerProcess{Ancestors: []int{610, 600, 220, 200, 1}}},
		{name: "nested winx in a sandbox session", peer: wire.PeerProcess{Ancestors: []int{610, 600, 420, 400, 1}}, refused: true},
		{name: "own guardian gone", peer: wire.PeerProcess{Ancestors: []int{510, 500, 1}, Confinement: none}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission{conf: tt.conf, proc: wire.Proc{Root: root}, guardians: func() map[int]ownGuardian { return own }}
			peer := tt.peer
			err := a.admit(&peer)
			var ce *wire.ConfinedPeerError
			if tt.refused != (err != nil) || (err != nil && !errors.As(err, &ce)) {
				t.Errorf("admit(%+v) = %v, want refused %v (a *wire.ConfinedPeerError)", tt.peer, err, tt.refused)
			}
		})
	}
}
