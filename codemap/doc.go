// Package codemap is code navigation over tree-sitter: per-file outlines,
// repository maps, references and syntax checks. It is the only package that
// uses cgo; built without cgo it answers ErrUnavailable.
package codemap
