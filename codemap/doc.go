// Package codemap is code navigation over tree-sitter: per-file outlines,
// repository maps, references and syntax checks, and the bounded cache of
// one Index per repository root that every caller shares (IndexCache). It
// does not remember what a session saw or outlined (mcp/session does). It is
// the only package that uses cgo; built without cgo it answers
// ErrUnavailable.
package codemap
