// Package guardian owns the shells of Winx sessions (type Shell): a real
// bash on a PTY whose command completion is read from a per-shell random
// nonce in a prompt-hook marker (never from terminal text), command generations, background commands in
// their own PTYs, input, screen snapshots, a bounded output journal and the
// shaping of output for the model, all behind one Terminal interface. The
// same Shell runs in-process (the embedded runtime) or inside a
// winx-guardian process, served over the daemon wire (guardian/wire,
// guardian/remote) and managed by winxd (guardian/daemon); guardian/runtime
// starts either for a session.
package guardian

// The Shell's files, one seam each: lifecycle.go its lifecycle (start,
// read loop, respawn, close), run.go foreground commands (launch, await,
// poll, interrupt, cancel), send.go what is typed into them (text, keys,
// bytes), screen.go the visible screen and turn waiting, person.go a
// person's attachment, jobs.go and background.go background commands.
