//go:build !cgo

package codemap

// Available reports whether this build can parse: false without cgo.
func Available() bool { return false }

// Outline answers ErrUnavailable in a build without cgo.
func Outline(path string, src []byte) ([]Symbol, error) { return nil, ErrUnavailable }

// Identifiers answers ErrUnavailable in a build without cgo.
func Identifiers(path string, src []byte) ([]Ident, error) { return nil, ErrUnavailable }

// FirstSyntaxError answers ErrUnavailable in a build without cgo.
func FirstSyntaxError(path string, src []byte) (*SyntaxIssue, error) { return nil, ErrUnavailable }
