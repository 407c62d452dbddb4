// Package daemon is winxd, the control plane of winx's durable sessions: it
// finds the live session guardians from their sockets, spawns new ones on
// request, holds their number under a quota and ends the idle ones after
// tiered time-to-live periods. It does not carry session traffic: an adapter
// asks winxd once for the socket of a session's guardian and then talks to
// that guardian directly (package guardian/remote).
//
// The socket directory is the registry. A guardian is live when it answers
// a hello and a status on its g-*.sock; winxd keeps no table that could
// disagree with that, so a restarted winxd (or the operator CLI, which uses
// the same Fleet) sees exactly the guardians that run. A planned shutdown
// of winxd leaves every guardian running.
//
// Concurrency: ensures and the sweep take a lock per guardian socket, so
// sessions of different keys spawn in parallel and one stopped or slow
// guardian holds up only requests for its own key; the quota decision alone
// is serialized, and while the sockets present plus the spawns in flight
// are under the limit it probes no guardian. Probes have a short deadline
// (DefaultDiscoverTimeout) and run in parallel; a guardian that does not
// answer is reported unresponsive, with the key and pid of its record.
// The sweep also cleans up after dead guardians (stale sockets; see
// remote.CleanupDead), ends the sessions whose workspace directory was
// removed and expires the lost-session records (remote.ExpireLost).
//
// A dead guardian leaves nothing running (watch.go): winxd holds a pidfd
// for every guardian it spawned or found from its record, all waited on by
// one goroutine, and is the child subreaper of the guardians it spawned;
// when one exits it kills the session's processes (tagged or reparented to
// winxd) and removes the socket and record at once, keeping the session's
// journals under a lost-session record (remote.LostRecord). The pidfds are
// not a registry: which guardians live is still decided from the sockets.
//
// Lifetimes (Policy):
//   - a guardian that never ran a command is removed after NeverUsedTTL
//     (30 min) without activity, one that did after UsedTTL (24 h);
//   - a guardian whose foreground or background command still runs is never
//     removed, by the sweep, the quota or a prune;
//   - at the quota (WINX_MAX_GUARDIANS, default 32) a new session may only
//     reclaim the oldest never-used idle guardian; when there is none the
//     request fails with a *QuotaError that names `winx prune`;
//   - a named principal (of a principals file) holds at most half the quota,
//     rounded up (Policy.Share): at its share it may only reclaim its own
//     never-used idle guardians, so one caller never starves the others.
//
// Authority: winxd and every guardian answer only peers whose hello carries
// the installation's wire secret (package guardian/wire), which winxd loads
// or creates in the state directory and hands to the guardians it spawns on
// a pipe (never in their environment). The sandbox of a session is fixed by
// the adapter's configuration (WINX_SANDBOX) through the session key: winxd
// starts the guardian of a confined session's key (SessionKey.IsSandboxed)
// confined, refuses a request whose sandbox flag disagrees with its key,
// and never replaces a live guardian, so no request can lower a session's
// sandbox.
//
// The methods winxd serves after the wire hello are in protocol.go; the
// adapter side, including starting winxd when nothing answers, is Client
// and Connect.
package daemon
