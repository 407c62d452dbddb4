// Package wire is the daemon wire of winx: where its Unix sockets live, how
// they are created and dialed safely, and the versioned hello that opens every
// connection. It carries JSON-RPC 2.0 (package jsonrpc) in frames of a 4-byte
// big-endian length followed by at most jsonrpc.MaxFrameSize bytes. It knows
// nothing of shells or sessions: the methods after the hello belong to the
// packages that serve them (guardian/remote for a session guardian).
//
// A connection goes through three steps:
//
//  1. Accept: the server reads the peer's credentials (SO_PEERCRED) and
//     closes the connection before reading a byte unless the peer runs as
//     the same uid. The dialer checks the server the same way, so a socket
//     planted by another user is never spoken to.
//  2. Hello: the client calls MethodHello with its Hello, which carries the
//     installation's wire secret (see SecretPath); the server answers with
//     its own, without a secret. A hello without the right secret is
//     answered with CodeUnauthenticated (the client sees ErrUnauthenticated)
//     and the connection closes: the uid check cannot tell the adapter from
//     a program in a Landlock-confined shell of the same user, the secret
//     can, since the sandbox hides it. A secret is not enough: a server
//     with an admission check (ServeOptions.Admit; winxd and every
//     guardian have one) then reads the caller's process in /proc once
//     (its no_new_privs and seccomp fields and its chain of parents,
//     pinned by SO_PEERPIDFD where the kernel has it) and refuses a caller
//     that runs inside a confined session with CodeConfinedPeer (the
//     client sees a *ConfinedPeerError), so a confined program that got
//     the secret still drives nothing. Majors must be equal; each side
//     then uses the smaller minor. Any other call before a successful
//     hello is answered with CodeHelloRequired.
//  3. Requests, answered concurrently; a client that goes away (EOF) has its
//     running calls cancelled after a millisecond: the protocol's clients
//     never half-close, so end of input means the caller left.
//
// Framing failures: a frame that is not JSON is answered with a parse error
// and the connection continues; a frame announced over the limit ends the
// connection (the stream cannot be trusted after a lying length). Neither
// affects any other connection.
//
// Spec: JSON-RPC 2.0 (https://www.jsonrpc.org/specification) with the
// deviations listed in package jsonrpc. Deliberate deviations of this wire:
//   - Error codes -32001 (hello required), -32002 (version mismatch),
//     -32003 (unauthenticated) and -32004 (confined caller) are
//     taken from the range the spec reserves for implementation-defined
//     server errors; packages above use -32010 and up.
//   - The hello is a call, not a notification, and must come first.
//
// Sockets are 0600 in a directory that must be owned by the caller's uid and
// not writable by group or others (Resolve, EnsureDir, CheckDir).
package wire
