// Package remote serves one shell session (a guardian.Shell) from a
// guardian process over the daemon wire, and is the adapter's client of
// it. It owns the session methods, their generation rules, output delivery
// and the guardian process's life (RunGuardian, Spawn); socket paths, the
// hello and framing belong to package wire, and the session's shell logic to
// package guardian. Discovery, quotas, TTL sweeps and spawning on demand are
// winxd's: it builds on Spawn, Attach and Status.
//
// # Processes
//
// RunGuardian is winx-guardian's body: it takes its socket with wire.Listen
// (a live guardian for the key makes it fail before any shell starts),
// starts the shell, writes "ready" to Config.ReadyFD, and serves until the
// session is closed (session.close, or a launch that cannot settle) or it
// is signalled; then it kills the shell's and background commands' process
// groups and unlinks the socket. Spawn starts the binary in its own session
// (setsid) with stdio on /dev/null and returns once it is ready.
//
// # Methods
//
// After the wire hello, a guardian answers the methods named by the Method
// constants (params and results are the unexported *Params types and
// Outcome, Status, Snapshot), dispatched through the Server's method table. Session failures are wire errors with code
// CodeSession and data {"kind": ...}; the client turns them back into
// *SessionError, which unwraps to the same sentinels as the embedded
// session (guardian.ErrCommandRunning, guardian.ErrNotRunning, ...) plus
// this package's (ErrStaleGeneration, ErrNoLaunch, ErrTerminated, ...).
//
// # Generations and cancellation
//
// Each foreground command has a generation. Poll, input and cancel name the
// generation they target; for one that is not the newest they fail with
// ErrStaleGeneration and touch nothing. A launch holds a gate from before
// the command is typed until its generation is published; a second run
// meanwhile is refused at once (command_already_running). Input and cancel
// wait for a launch in flight (at most ServerOptions.SettleTimeout) and then
// act while holding the gate, so no launch can slip between their check and
// their action. A run may carry a launch id; a cancel naming it waits until
// the launch published its generation or proved that no command started,
// and a cancel that arrives first makes the launch refuse to start. A cancel
// whose launch does not settle in time ends the whole session (every
// process killed) before it is answered.
//
// # Output delivery
//
// The guardian keeps output until a client acknowledges it: every answer
// carrying output has a delivery number (Outcome.Seq); the client sends it
// back in a session.ack notification before closing the connection, and
// again in its next request. Text not acknowledged travels again with the
// next answer of the same stream (foreground generation or background id),
// so an answer lost to a cancelled call, a dropped connection or an adapter
// crash is delivered to whoever reads next. Two clients reading one stream
// concurrently may both see the same text; no text is lost. Unacknowledged
// text is bounded (256 KiB per stream, oldest lines dropped with a note).
//
// Attach returns a Snapshot: the clocks, cwd, the newest command with its
// generation and the output nobody acknowledged. That output stays pending,
// so the next poll still delivers it.
//
// # Connections
//
// RemoteShell opens one connection per action: dial, hello, one call, ack,
// close. A context that ends closes the connection; the guardian sees its
// caller leave, abandons the wait (a foreground command keeps running and
// stays pollable by generation) and keeps what it took from the session as
// pending output. Every connection must reach the guardian incarnation the
// client attached to (the hello's epoch); a socket nobody answers on, or a
// new incarnation, makes the RemoteShell fail every call with a
// *GuardianGoneError from then on (wrapped in a *guardian.ShellLostError by
// the guardian.Terminal methods). Capabilities are checked against the
// guardian's own hello.
//
// Every call has a deadline: the wait it asks for plus a grace (the
// client's timeout; a cancel or an input also the settle timeout, a reset
// a shell's start). A guardian that accepts the connection but does not
// answer within it (SIGSTOPped, hung, starved) gives an
// *UnresponsiveError, which matches guardian.ErrUnresponsive and is not
// sticky: a continued guardian answers the same client again.
//
// # Process lifetime
//
// winx-guardian is the child subreaper of its session (pty.BecomeSubreaper):
// an orphan among its descendants, a setsid'd one included, is reparented
// to it rather than to init, and it kills every descendant when its session
// ends. Its shells die with it (PR_SET_PDEATHSIG, set by package pty). Every
// process of the session inherits EnvTag, and the guardian leaves a Record
// beside its socket naming the tag and its shell directory, so that after a
// SIGKILL winxd (at once: it watches its guardians' pidfds), its sweep,
// `winx kill --all` and `winx prune` (CleanupDead) kill what it left, even
// processes that escaped to init, and remove its socket and record. The
// session's shell directory (its journals) and jobs record are kept as the
// evidence of a lost session, named by a LostRecord (lost.go) until it
// expires. What holds without /proc (darwin): the shell's process group
// dies on close; nothing else.
//
// # Jobs
//
// Background commands are jobs (MethodJobs lists them). The guardian
// rewrites a JobsRecord beside its socket whenever one starts or ends.
// CleanupDead leaves it: after a SIGKILL it is what says which jobs were
// lost, to `winx jobs` and to the next guardian of the session key, which
// lists them lost and numbers its own jobs after them. A guardian that ends
// normally removes it; `winx prune` removes one whose socket is gone and
// whose session left no lost record (ExpireLost removes it with that).
//
// # People
//
// A person may take the wheel of a session (winx attach --interactive,
// PersonTerminal) on a connection of their own, admitted as any other
// (same uid, the wire secret, a caller outside every confined session).
// person.attach claims the session's terminal (one person at a time),
// person.read long-polls the raw output after an offset and renews the
// attachment's lease, person.write types the person's keys, person.resize
// sets the PTY's size, person.detach ends it; so does the connection's end
// (the read in flight sees its caller leave) or a lease that ran out. The
// session (guardian.Shell) owns that state: while a person is attached,
// every method that would type or start a command fails with the kind
// person_attached, and the first answer after the detach that carries an
// Outcome says what the person ran (Outcome.PersonNote, taken once).
//
// # Activity clocks
//
// Status reports created, last activity (every call except status, jobs
// and ack), last command and whether a command ever ran, the newest
// generation and whether it runs, and the background commands. winxd bases
// TTLs on them.
package remote
