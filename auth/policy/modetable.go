package policy

// The mode table: the one place that says what each mode is.

import "strings"

// FileRule is what a mode lets EditFiles and output redirections write.
type FileRule int

const (
	// FilesAll writes anywhere the path policy allows.
	FilesAll FileRule = iota
	// FilesNone writes no file.
	FilesNone
	// FilesGlobs writes only paths that match the mode's AllowedGlobs.
	FilesGlobs
)

// CommandRule is which commands a mode runs.
type CommandRule int

const (
	// CommandsAll runs every command, unparsed.
	CommandsAll CommandRule = iota
	// CommandsReadOnly runs only the read-only commands of readonly.go.
	CommandsReadOnly
	// CommandsAllowlist runs only the mode's AllowedCommands (or all).
	CommandsAllowlist
)

// KernelProfile is how a mode's shell is started. Package mcp/session turns
// it into a guardian shell profile; this package names it only, because it
// runs nothing.
type KernelProfile struct {
	// ReadOnly runs the shell under the kernel's read-only ruleset where
	// Landlock is available.
	ReadOnly bool
	// RestrictGit neutralises the programs git would take from a
	// repository's configuration.
	RestrictGit bool
}

// ModeSpec is one row of the mode table.
type ModeSpec struct {
	Name string
	// Summary is the clause Initialize's schema shows for the mode
	// ("wcgw: full access").
	Summary  string
	Files    FileRule
	Commands CommandRule
	// Configured modes take code_writer_config (allowed_globs and
	// allowed_commands); the others refuse it.
	Configured bool
	Kernel     KernelProfile
}

// DefaultMode is the mode of a session that never chose one; the zero Mode
// decides as this one.
const DefaultMode = ModeWCGW

// modeTable lists every mode, the default first, in the order the schema
// and the error messages name them. A new mode is one row here (and its
// command and file rules, when it needs new ones). Read only through
// LookupMode and Modes, which return copies.
var modeTable = [...]ModeSpec{
	{Name: ModeWCGW, Summary: "full access", Files: FilesAll, Commands: CommandsAll},
	{Name: ModeArchitect, Summary: "read-only", Files: FilesNone, Commands: CommandsReadOnly,
		Kernel: KernelProfile{ReadOnly: true, RestrictGit: true}},
	{Name: ModeCodeWriter, Summary: "per code_writer_config", Files: FilesGlobs, Commands: CommandsAllowlist,
		Configured: true, Kernel: KernelProfile{RestrictGit: true}},
}

// Modes returns the mode table, the default mode first.
func Modes() []ModeSpec {
	out := make([]ModeSpec, len(modeTable))
	copy(out, modeTable[:])
	return out
}

// ModeNames returns the mode names in table order.
func ModeNames() []string {
	names := make([]string, len(modeTable))
	for i, s := range modeTable {
		names[i] = s.Name
	}
	return names
}

// LookupMode returns the row of the named mode; "" names the default mode.
func LookupMode(name string) (ModeSpec, bool) {
	if name == "" {
		name = DefaultMode
	}
	for _, s := range modeTable {
		if s.Name == name {
			return s, true
		}
	}
	return ModeSpec{}, false
}

// Spec returns the row of m's mode and whether it is known.
func (m Mode) Spec() (ModeSpec, bool) { return LookupMode(m.Name) }

// Restricts reports whether the mode checks commands: an unknown mode does
// (and denies them), the default mode and every CommandsAll mode do not.
func (m Mode) Restricts() bool {
	s, ok := m.Spec()
	return !ok || s.Commands != CommandsAll
}

// readOnlyCommands reports whether m runs only read-only commands.
func (m Mode) readOnlyCommands() bool {
	s, ok := m.Spec()
	return ok && s.Commands == CommandsReadOnly
}

// modeFiles is the file rule of the named mode; FilesNone for an unknown
// one.
func modeFiles(name string) FileRule {
	if s, ok := LookupMode(name); ok {
		return s.Files
	}
	return FilesNone
}

// modeList names the modes for an error message: "a, b or c".
func modeList() string {
	names := ModeNames()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
