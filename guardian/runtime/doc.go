// Package runtime owns how a session's terminal is started: in this process
// (Embedded: the shell lives as long as the adapter) or in a guardian
// process that winxd spawns (Daemon: the shell survives the adapter). It
// takes a session's identity as a typed Spec and hands back a
// guardian.Terminal; it does not know about sessions, threads, modes or
// principals' rights, which stay with the adapter.
package runtime
