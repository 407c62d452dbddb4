package policy

// Modes, their configuration and the write decision.

import (
	"path/filepath"
	"slices"
	"strings"
)

// Mode names.
const (
	ModeWCGW       = "wcgw"
	ModeArchitect  = "architect"
	ModeCodeWriter = "code_writer"
)

// Limits of a code_writer configuration.
const (
	// MaxModeEntries bounds allowed_globs and allowed_commands each.
	MaxModeEntries = 256
	// MaxModeEntryBytes bounds one glob or command entry.
	MaxModeEntryBytes = 1024
)

// Mode is a session's mode and, for code_writer, what it may touch. The
// zero Name behaves as wcgw in the decisions (the session default);
// Validate rejects it.
type Mode struct {
	Name string
	// AllGlobs allows writes anywhere; otherwise AllowedGlobs are absolute,
	// clean patterns (filepath.Match per segment, "**" for any number of
	// segments) a written path must match.
	AllGlobs     bool
	AllowedGlobs []string
	// AllCommands allows every command; otherwise AllowedCommands are
	// command prefixes of one or more plain words.
	AllCommands     bool
	AllowedCommands []string
}

// CodeWriterConfig is code_writer's configuration as a client gives it:
// each list is "all" (the All flag) or a list. Relative globs are joined to
// the workspace root.
type CodeWriterConfig struct {
	AllGlobs        bool
	AllowedGlobs    []string
	AllCommands     bool
	AllowedCommands []string
}

// ParseMode builds the mode name with cfg. code_writer needs cfg; for the
// other modes a cfg is still checked (a malformed one is an error, never
// ignored) but not used. root, an absolute path, anchors relative globs.
// Errors are *ModeConfigError.
func ParseMode(name string, cfg *CodeWriterConfig, root string) (Mode, error) {
	if spec, _ := LookupMode(name); name == "" || !spec.Configured {
		if cfg != nil {
			if _, err := ParseMode(ModeCodeWriter, cfg, root); err != nil {
				return Mode{}, err
			}
		}
		m := Mode{Name: name}
		return m, m.Validate()
	}
	if cfg == nil {
		return Mode{}, badMode("code_writer needs allowed_globs and allowed_commands")
	}
	if len(cfg.AllowedGlobs) > MaxModeEntries || len(cfg.AllowedCommands) > MaxModeEntries {
		return Mode{}, badMode("code_writer allows at most %d globs and %d commands", MaxModeEntries, MaxModeEntries)
	}
	m := Mode{Name: name, AllGlobs: cfg.AllGlobs, AllCommands: cfg.AllCommands}
	for _, g := range cfg.AllowedGlobs {
		if slices.Contains(strings.Split(g, "/"), "..") {
			return Mode{}, badMode("code_writer glob %q holds \"..\"", g)
		}
		if g != "" {
			g = filepath.Clean(g)
		}
		if g != "" && !filepath.IsAbs(g) {
			if !filepath.IsAbs(root) {
				return Mode{}, badMode("code_writer glob %q is relative and there is no workspace root", g)
			}
			g = filepath.Join(root, g)
		}
		m.AllowedGlobs = append(m.AllowedGlobs, g)
	}
	for _, c := range cfg.AllowedCommands {
		m.AllowedCommands = append(m.AllowedCommands, strings.Join(strings.Fields(c), " "))
	}
	return m, m.Validate()
}

// Validate reports an unknown mode, or a code_writer mode with a glob that
// is not an absolute clean pattern or a command entry that is not plain
// words. Errors are *ModeConfigError.
func (m Mode) Validate() error {
	spec, ok := LookupMode(m.Name)
	switch {
	case !ok || m.Name == "":
		return badMode("unknown mode %q (want %s)", m.Name, modeList())
	case !spec.Configured:
		if m.AllGlobs || m.AllCommands || len(m.AllowedGlobs) > 0 || len(m.AllowedCommands) > 0 {
			return badMode("mode %s takes no allowed_globs or allowed_commands", m.Name)
		}
		return nil
	}
	if len(m.AllowedGlobs) > MaxModeEntries || len(m.AllowedCommands) > MaxModeEntries {
		return badMode("code_writer allows at most %d globs and %d commands", MaxModeEntries, MaxModeEntries)
	}
	for _, g := range m.AllowedGlobs {
		switch {
		case g == "":
			return badMode("code_writer allowed_globs holds an empty glob")
		case len(g) > MaxModeEntryBytes:
			return badMode("code_writer glob longer than %d bytes", MaxModeEntryBytes)
		case !filepath.IsAbs(g):
			return badMode("code_writer glob %q is not absolute", g)
		case filepath.Clean(g) != g:
			return badMode("code_writer glob %q is not clean (no \"..\", \".\", \"//\" or trailing \"/\")", g)
		}
		for _, seg := range strings.Split(g, "/") {
			if _, err := filepath.Match(seg, ""); err != nil {
				return badMode("code_writer glob %q: %v", g, err)
			}
		}
	}
	for _, c := range m.AllowedCommands {
		if err := checkCommandEntry(c); err != nil {
			return err
		}
	}
	return nil
}

// checkCommandEntry accepts one allowed_commands entry: plain words, no
// shell syntax, because entries are compared with parsed words, never run.
func checkCommandEntry(c string) error {
	switch {
	case strings.TrimSpace(c) == "":
		return badMode("code_writer allowed_commands holds an empty command")
	case len(c) > MaxModeEntryBytes:
		return badMode("code_writer command longer than %d bytes", MaxModeEntryBytes)
	case c == "all":
		return badMode(`code_writer allowed_commands: give "all" as the whole value, not as a list entry`)
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if b < 0x20 && b != '\t' || b == 0x7f || strings.IndexByte(";&|<>()$`'\"\\*?[]{}~!#=", b) >= 0 {
			return badMode("code_writer command %q holds %q: entries are plain words, not shell syntax", c, string(b))
		}
	}
	return nil
}

// Clone returns m with its own slices.
func (m Mode) Clone() Mode {
	m.AllowedGlobs = slices.Clone(m.AllowedGlobs)
	m.AllowedCommands = slices.Clone(m.AllowedCommands)
	return m
}

// AllowsWrite reports whether the mode lets the file at path (absolute and
// canonical: the caller resolved symlinks) be changed. It returns nil or a
// *WriteDeniedError.
func (m Mode) AllowsWrite(path string) error {
	spec, ok := m.Spec()
	switch {
	case !ok:
	case spec.Files == FilesAll:
		return nil
	case spec.Files == FilesGlobs:
		if m.AllGlobs {
			return nil
		}
		git := hasGitSegment(path)
		for _, g := range m.AllowedGlobs {
			// A repository's .git holds hooks and config that run programs
			// (core.fsmonitor, core.pager...) under commands code_writer may
			// allow, such as git status: only a glob that names .git itself
			// reaches it, never a wildcard.
			if GlobMatch(g, path) && (!git || hasGitSegment(g)) {
				return nil
			}
		}
	}
	return &WriteDeniedError{Mode: m.Name, Path: path}
}

// hasGitSegment reports whether a path or pattern has a ".git" segment.
func hasGitSegment(p string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".git" {
			return true
		}
	}
	return false
}

// GlobMatch is filepath.Match extended with "**" as any number of whole
// path segments ("src/**/*.go" matches "src/a.go" and "src/x/y/a.go").
func GlobMatch(pattern, path string) bool {
	ps := strings.Split(filepath.Clean(pattern), "/")
	ns := strings.Split(filepath.Clean(path), "/")
	return matchSegments(ps, ns, 0)
}

// maxGlobStars bounds the "**" segments one match explores, so a pattern
// of many "**" cannot make matching exponential.
const maxGlobStars = 8

func matchSegments(ps, ns []string, stars int) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			if stars >= maxGlobStars {
				return false
			}
			for skip := 0; skip <= len(ns); skip++ {
				if matchSegments(ps[1:], ns[skip:], stars+1) {
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
