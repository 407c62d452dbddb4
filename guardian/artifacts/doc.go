// Package artifacts accounts for the temporary artifacts sessions keep under
// a workspace's <root>/.winx/tmp, checks them against fixed budgets, says
// which budget blocks a session and reclaims stale ones; it does not decide
// which commands count as cleanup (auth/policy does) nor word the refusal
// (the tool layer does, from the usage and typed errors here).
//
// # Layout
//
//	<root>/.winx/tmp/                    the workspace's temporary area
//	<root>/.winx/tmp/session-<16 hex>/   one session's directory (WINX_TEMP_DIR)
//	<root>/.winx/tmp/session-<id>/<h>/   a helper: one top-level subdirectory of a
//	                                     session directory, the private area of a
//	                                     sub-agent or a tool
//
// Files directly in a session directory count only to the session. Anything
// in .winx/tmp that is not a session directory counts only to the workspace
// and is never reclaimed.
//
// # Budgets
//
// A session may hold at most [MaxSessionBytes] (64 MiB) in at most
// [MaxSessionFiles] (128) files; each of its helpers at most [MaxHelperBytes]
// (32 MiB); all of .winx/tmp together at most [MaxWorkspaceBytes] (256 MiB),
// the high-water mark. Sizes are apparent sizes (st_size, as `ls -l` and
// `du --apparent-size` show them): a sparse file counts its full length, a
// directory counts nothing of its own. "Files" are entries that are not
// directories: regular files, symlinks, sockets, fifos. A symlink is counted
// as an entry of its own size and is never followed, neither to count its
// target nor to walk into it.
//
// # Scanning
//
// [Scan] walks .winx/tmp through an [os.Root], so no path escapes it, and
// stops after [MaxScanEntries] entries or below [MaxScanDepth] levels; a
// stopped walk marks the [Usage] Truncated, which [Usage.Check] reports as
// over the workspace's entry budget. If .winx or .winx/tmp is a symlink or
// not a directory, Scan fails with [ErrUnsafeDir] rather than count or
// delete through it.
//
// # Reclaim
//
// [Reclaim] acts only when the workspace is over the high-water mark. Its
// candidates are the directories of sessions that are not live (the caller
// names the live ones) and the helper directories of any session, each only
// if its newest modification time (of the directory itself or anything
// below it) is at least [StaleAfter] (24 h) old. Candidates are deleted
// oldest first until the workspace is at or under the mark. Nothing younger
// than StaleAfter is ever deleted, so a workspace can stay over the mark;
// the tool layer then blocks ordinary commands until the agent cleans up.
// The clock is a parameter, so tests run in a testing/synctest bubble.
//
// An active session at [ReclaimLevel] (75 %) of a budget does not wait for
// the mark: [ReclaimSession] deletes its own helpers idle for the full
// StaleAfter, oldest first, until it is back at [ReclaimTarget] (50 %).
//
// # Monitoring
//
// [Monitor] keeps the last scan of each workspace for [ScanReuse] (1 s), so
// the check before every command does not walk the tree each time; a
// session at [WarnLevel] (80 %) of a budget or more always gets a fresh
// scan, so its cleanup shows at once. [Monitor.Audit] scans again after
// every action, so writes no preflight saw count from the next check on,
// and counts what the reclaims freed ([Monitor.Freed]). [Usage.Blocking]
// names the budget that stops a session's ordinary commands.
package artifacts
