package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"winx/guardian/remote"
	"winx/guardian/wire"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestPolicyExpired(t *testing.T) {
	var p Policy
	tests := []struct {
		name string
		st   remote.Status
		idle time.Duration
		want bool
	}{
		{"never used, just under 30m", remote.Status{}, 30*time.Minute - time.Second, false},
		{"never used, 30m", remote.Status{}, 30 * time.Minute, true},
		{"used, 30m", remote.Status{EverRanCommand: true}, 30 * time.Minute, false},
		{"used, just under 24h", remote.Status{EverRanCommand: true}, 24*time.Hour - time.Second, false},
		{"used, 24h", remote.Status{EverRanCommand: true}, 24 * time.Hour, true},
		{"foreground running, a week", remote.Status{EverRanCommand: true, Running: true}, 7 * 24 * time.Hour, false},
		{"background running, a week", remote.Status{EverRanCommand: true, BackgroundRunning: 1}, 7 * 24 * time.Hour, false},
		{"never used but background running", remote.Status{BackgroundRunning: 2}, 7 * 24 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.st
			st.Created, st.LastActivity = t0, t0
			if got := p.Expired(st, t0.Add(tt.idle)); got != tt.want {
				t.Errorf("Expired(%+v, +%v) = %v, want %v", tt.st, tt.idle, got, tt.want)
			}
		})
	}
}

func TestIdleSinceLatestClock(t *testing.T) {
	st := remote.Status{Created: t0, LastActivity: t0.Add(time.Minute), LastCommand: t0.Add(time.Hour), EverRanCommand: true}
	if got := IdleSince(st); !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("IdleSince = %v, want %v", got, t0.Add(time.Hour))
	}
	if (Policy{}).Expired(st, t0.Add(24*time.Hour)) {
		t.Errorf("a guardian whose last command was 23h ago expired")
	}
}

func g(name string, created time.Time, used, busy bool) Guardian {
	return Guardian{Socket: name, Epoch: name, Status: remote.Status{
		Key: name, Created: created, LastActivity: created, EverRanCommand: used, Running: busy,
	}}
}

func names(gs []Guardian) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Socket)
	}
	slices.Sort(out)
	return out
}

func TestReclaim(t *testing.T) {
	p := Policy{Max: 2}
	tests := []struct {
		name  string
		live  []Guardian
		want  []string
		quota bool
	}{
		{"room left", []Guardian{g("a", t0, false, false)}, nil, false},
		{"never-used reclaimed, used kept", []Guardian{g("used", t0, true, false), g("fresh", t0.Add(time.Hour), false, false)}, []string{"fresh"}, false},
		{"oldest never-used first", []Guardian{g("new", t0.Add(time.Hour), false, false), g("old", t0, false, false)}, []string{"old"}, false},
		{"busy never-used kept", []Guardian{g("busy", t0, false, true), g("used", t0, true, false)}, nil, true},
		{"all used", []Guardian{g("a", t0, true, false), g("b", t0, true, false)}, nil, true},
		{"over quota needs two", []Guardian{g("a", t0, false, false), g("b", t0.Add(time.Minute), false, false), g("c", t0, true, false)}, []string{"a", "b"}, false},
		{"over quota, only one reclaimable", []Guardian{g("a", t0, false, false), g("b", t0, true, false), g("c", t0, true, false)}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Reclaim(tt.live, "")
			if tt.quota {
				var qe *QuotaError
				if !errors.As(err, &qe) || !errors.Is(err, ErrQuota) {
					t.Fatalf("Reclaim = %v, %v; want a *QuotaError", names(got), err)
				}
				if !strings.Contains(err.Error(), PruneCommand) {
					t.Errorf("quota error %q does not name %q", err, PruneCommand)
				}
				if len(got) != 0 {
					t.Errorf("Reclaim returned %v with its error", names(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("Reclaim: %v", err)
			}
			if !slices.Equal(names(got), tt.want) {
				t.Errorf("Reclaim = %v, want %v", names(got), tt.want)
			}
		})
	}
}

// fakeFleet is a fleet of guardians that exist only in memory; it is used
// inside synctest bubbles, where the clock is fake.
type fakeFleet struct {
	mu      sync.Mutex
	live    map[string]*Guardian // by socket
	closed  []string
	spawned []string
}

func newFakeFleet(gs ...Guardian) *fakeFleet {
	f := &fakeFleet{live: map[string]*Guardian{}}
	for _, g := range gs {
		f.live[g.Socket] = &g
	}
	return f
}

func (f *fakeFleet) Discover(context.Context) ([]Guardian, []Unreachable, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Guardian
	for _, g := range f.live {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Guardian) int { return strings.Compare(a.Socket, b.Socket) })
	return out, nil, nil
}

func (f *fakeFleet) Sockets() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for s := range f.live {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeFleet) ProbeAll(ctx context.Context, socks []string) (live []Guardian, bad []Unreachable) {
	for _, s := range socks {
		if g, err := f.Probe(ctx, s); err == nil {
			live = append(live, g)
		}
	}
	return live, nil
}

func (f *fakeFleet) Cleanup(string, remote.Loss) error { return nil }

func (f *fakeFleet) Close(_ context.Context, g Guardian) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.live, g.Socket)
	f.closed = append(f.closed, g.Socket)
	return nil
}

func (f *fakeFleet) Probe(_ context.Context, socket string) (Guardian, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.live[socket]; ok {
		return *g, nil
	}
	return Guardian{}, &wire.DialError{Path: socket, Err: fmt.Errorf("%w: refused", wire.ErrNoServer)}
}

func (f *fakeFleet) Spawn(_ context.Context, p *EnsureParams, socket string) (Guardian, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	g := &Guardian{Socket: socket, Epoch: socket, Status: remote.Status{Key: p.Key, Created: now, LastActivity: now}}
	f.live[socket] = g
	f.spawned = append(f.spawned, p.Key)
	return *g, nil
}

// use marks the guardian of key as having run a command now.
func (f *fakeFleet) use(dir, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.live[wire.GuardianSocket(dir, key)]
	g.Status.EverRanCommand, g.Status.LastCommand = true, time.Now()
}

func (f *fakeFleet) closedSockets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.closed)
}

func TestSweepTiers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fresh := g("fresh", start, false, false)
		used := g("used", start, true, false)
		used.Status.LastCommand = start
		busy := g("busy", start, true, true)
		bg := g("bg", start, false, false)
		bg.Status.BackgroundRunning = 1
		f := newFakeFleet(fresh, used, busy, bg)
		s := newServer(Options{Dir: "/d"}, f, wire.Hello{})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go s.sweepLoop(ctx)

		time.Sleep(29 * time.Minute)
		synctest.Wait()
		if c := f.closedSockets(); len(c) != 0 {
			t.Fatalf("after 29 min the sweep ended %v, want nothing", c)
		}
		// The never-used tier ends at 30 min; the sweep that sees it runs
		// at most one interval later.
		time.Sleep(time.Minute + DefaultSweepInterval)
		synctest.Wait()
		if c := f.closedSockets(); !slices.Equal(c, []string{"fresh"}) {
			t.Fatalf("after 31 min the sweep ended %v, want [fresh]", c)
		}
		time.Sleep(24*time.Hour - 31*time.Minute - time.Minute)
		synctest.Wait()
		if c := f.closedSockets(); !slices.Equal(c, []string{"fresh"}) {
			t.Fatalf("before 24 h the sweep ended %v, want [fresh]", c)
		}
		time.Sleep(time.Minute + DefaultSweepInterval)
		synctest.Wait()
		if c := f.closedSockets(); !slices.Equal(c, []string{"fresh", "used"}) {
			t.Fatalf("after 24 h the sweep ended %v, want [fresh used]", c)
		}
		time.Sleep(30 * 24 * time.Hour)
		synctest.Wait()
		if c := f.closedSockets(); len(c) != 2 {
			t.Errorf("busy guardians were swept: %v", c)
		}
	})
}

func TestSweepActivityExtends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := newFakeFleet(g("a", start, false, false))
		s := newServer(Options{Dir: "/d"}, f, wire.Hello{})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go s.sweepLoop(ctx)
		time.Sleep(20 * time.Minute)
		f.mu.Lock()
		f.live["a"].Status.LastActivity = time.Now() // an adapter attached
		f.mu.Unlock()
		time.Sleep(20 * time.Minute)
		synctest.Wait()
		if c := f.closedSockets(); len(c) != 0 {
			t.Fatalf("a guardian used 20 min ago was swept: %v", c)
		}
		time.Sleep(11*time.Minute + DefaultSweepInterval)
		synctest.Wait()
		if c := f.closedSockets(); !slices.Equal(c, []string{"a"}) {
			t.Fatalf("sweep ended %v, want [a]", c)
		}
	})
}

func TestEnsureQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const dir = "/run/winx"
		f := newFakeFleet()
		s := newServer(Options{Dir: dir, Policy: Policy{Max: 2}}, f, wire.Hello{})
		ctx := t.Context()
		ensure := func(key string) (*EnsureResult, error) {
			time.Sleep(time.Second) // distinct creation times
			return s.Ensure(ctx, &EnsureParams{Key: key, Dir: "/w"})
		}
		for _, k := range []string{"used", "fresh"} {
			r, err := ensure(k)
			if err != nil || !r.Spawned {
				t.Fatalf("Ensure(%s) = %+v, %v; want a spawn", k, r, err)
			}
		}
		f.use(dir, "used")
		r, err := ensure("used")
		if err != nil || r.Spawned {
			t.Fatalf("Ensure of a live key = %+v, %v; want the live guardian", r, err)
		}
		r, err = ensure("third")
		if err != nil {
			t.Fatalf("Ensure(third) at the quota: %v", err)
		}
		if got := names(r.Reclaimed); !slices.Equal(got, []string{wire.GuardianSocket(dir, "fresh")}) {
			t.Errorf("reclaimed %v, want the never-used guardian", got)
		}
		f.use(dir, "third")
		_, err = ensure("fourth")
		var qe *QuotaError
		if !errors.As(err, &qe) || qe.Max != 2 || qe.Live != 2 {
			t.Fatalf("Ensure(fourth) = %v, want a *QuotaError{Max 2, Live 2}", err)
		}
		if !strings.Contains(err.Error(), PruneCommand) {
			t.Errorf("quota error %q does not name %q", err, PruneCommand)
		}
		if slices.Contains(f.spawned, "fourth") || len(f.live) != 2 {
			t.Errorf("a refused ensure changed the fleet: spawned %v, live %d", f.spawned, len(f.live))
		}
		// The wire form keeps the type.
		if back := fromWireError(toWireError(err)); !errors.As(back, &qe) || qe.Live != 2 {
			t.Errorf("quota error through the wire = %v", back)
		}
	})
}

func TestPruneIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := newFakeFleet(g("used", start, true, false), g("fresh", start, false, false), g("busy", start, true, true))
		time.Sleep(10 * time.Second)
		ten := 20 * time.Second
		ended, err := Prune(t.Context(), f, Policy{}, time.Now(), &ten)
		if err != nil || len(ended) != 0 {
			t.Fatalf("Prune(20s) after 10s = %v, %v; want nothing", names(ended), err)
		}
		ended, err = Prune(t.Context(), f, Policy{}, time.Now(), nil)
		if err != nil || len(ended) != 0 {
			t.Fatalf("Prune(tiers) after 10s = %v, %v; want nothing", names(ended), err)
		}
		zero := time.Duration(0)
		ended, err = Prune(t.Context(), f, Policy{}, time.Now(), &zero)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(ended); !slices.Equal(got, []string{"fresh", "used"}) {
			t.Errorf("Prune(0) ended %v, want [fresh used] (never the busy one)", got)
		}
	})
}

func TestSessionKeyRoundTrip(t *testing.T) {
	k := SessionKey{ExternalID: "ws_proj_0011aabb", Principal: "local", Workspace: "/home/u/proj", Scope: "conv-1"}
	got, ok := ParseSessionKey(k.String())
	if !ok || got != k {
		t.Errorf("ParseSessionKey(String()) = %+v, %v; want %+v", got, ok, k)
	}
	if strings.ContainsRune(k.String(), 0) {
		t.Errorf("key %q holds a NUL byte; it cannot be a command-line argument", k.String())
	}
	for _, bad := range []string{"", "plain-key", `["winx0","a","b","c","d"]`, `["winx1","a","b"]`, `["winx1","a","b","c",1]`} {
		if _, ok := ParseSessionKey(bad); ok {
			t.Errorf("ParseSessionKey(%q) accepted", bad)
		}
	}
}

// pg is g for a guardian of principal's session named name.
func pg(principal, name string, created time.Time, used bool) Guardian {
	gd := g(name, created, used, false)
	gd.Status.Key = SessionKey{ExternalID: name, Principal: principal, Workspace: "/w/" + name}.String()
	return gd
}

func TestReclaimPrincipalShare(t *testing.T) {
	p := Policy{Max: 3} // a named principal's share is 2
	tests := []struct {
		name      string
		principal string
		live      []Guardian
		want      []string
		share     bool // refused at the share (else at the quota, if refused)
		refused   bool
	}{
		{"under the share", "alice", []Guardian{pg("alice", "a1", t0, true)}, nil, false, false},
		{"at the share, all used", "alice", []Guardian{pg("alice", "a1", t0, true), pg("alice", "a2", t0, true)}, nil, true, true},
		{"at the share, own never-used reclaimed", "alice",
			[]Guardian{pg("alice", "a1", t0, true), pg("alice", "a2", t0, false), pg("bob", "b1", t0, false)}, []string{"a2"}, false, false},
		{"another principal's full share leaves room", "bob",
			[]Guardian{pg("alice", "a1", t0, true), pg("alice", "a2", t0, true)}, nil, false, false},
		{"the unnamed caller is held to the quota only", "",
			[]Guardian{pg("", "l1", t0, true), pg("", "l2", t0, true)}, nil, false, false},
		{"quota still applies inside the share", "carol",
			[]Guardian{pg("alice", "a1", t0, true), pg("alice", "a2", t0, true), pg("bob", "b1", t0, true)}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Reclaim(tt.live, tt.principal)
			if !tt.refused {
				if err != nil || !slices.Equal(names(got), tt.want) {
					t.Fatalf("Reclaim = %v, %v; want %v", names(got), err, tt.want)
				}
				return
			}
			var qe *QuotaError
			if !errors.As(err, &qe) || !errors.Is(err, ErrQuota) || len(got) != 0 {
				t.Fatalf("Reclaim = %v, %v; want a *QuotaError and nothing ended", names(got), err)
			}
			if (qe.Share > 0) != tt.share {
				t.Errorf("QuotaError share = %d, want refused at the share: %v", qe.Share, tt.share)
			}
			if tt.share && !strings.Contains(err.Error(), "its share of the quota (2 of 3)") {
				t.Errorf("share error %q does not state the share", err)
			}
		})
	}
}
