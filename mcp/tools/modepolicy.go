package tools

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Write policy of session modes: wcgw writes anywhere the path policy
// allows, architect writes nothing, code_writer writes only paths matching
// its allowed globs. Command policy per mode comes with command parsing.

// ModeError is a write the session's mode forbids.
type ModeError struct {
	Mode string
	Path string // "" when the mode forbids every write
}

func (e *ModeError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("tools: mode %s does not allow file changes", e.Mode)
	}
	return fmt.Sprintf("tools: mode %s does not allow writing %s (outside its allowed_globs)", e.Mode, e.Path)
}

// allowsWrite reports whether the mode lets a file at the canonical path
// be changed.
func (m Mode) allowsWrite(path string) error {
	switch m.Name {
	case "", ModeWCGW:
		return nil
	case ModeArchitect:
		return &ModeError{Mode: m.Name}
	case ModeCodeWriter:
		if m.AllGlobs {
			return nil
		}
		for _, g := range m.AllowedGlobs {
			if globMatch(g, path) {
				return nil
			}
		}
		return &ModeError{Mode: m.Name, Path: path}
	}
	return &ModeError{Mode: m.Name}
}

// globMatch is filepath.Match extended with "**" as any number of whole
// path segments (so "src/**/*.go" matches "src/a.go" and "src/x/y/a.go").
func globMatch(pattern, path string) bool {
	ps := strings.Split(filepath.Clean(pattern), "/")
	ns := strings.Split(filepath.Clean(path), "/")
	return matchSegments(ps, ns)
}

func matchSegments(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			for skip := 0; skip <= len(ns); skip++ {
				if matchSegments(ps[1:], ns[skip:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		if ok, err := filepath.Match(ps[0], ns[0]); err != nil || !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}
