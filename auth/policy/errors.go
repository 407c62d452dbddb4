package policy

import (
	"errors"
	"fmt"

	"winx/auth/policy/shellparse"
)

// One error type per kind of denial, each carrying the data the tools put
// into their answers (mcp/tools builds the envelope with errors.As; the
// codes are command_not_allowed for *CommandDeniedError and
// *CommandParseError, file_operation_denied for *WriteDeniedError and
// temporary_artifact_policy for *ArtifactWriteError).

// ErrInvalidMode is an unknown mode or a malformed code_writer
// configuration; it is always carried in a *ModeConfigError.
var ErrInvalidMode = errors.New("policy: invalid mode")

// ModeConfigError is a mode that cannot be used. Msg says why, for the
// caller to show.
type ModeConfigError struct {
	Msg string
}

func (e *ModeConfigError) Error() string { return "policy: invalid mode: " + e.Msg }
func (e *ModeConfigError) Unwrap() error { return ErrInvalidMode }

func badMode(format string, args ...any) error {
	return &ModeConfigError{Msg: fmt.Sprintf(format, args...)}
}

// WriteDeniedError is a file change the mode forbids.
type WriteDeniedError struct {
	Mode string
	Path string // "" when the mode forbids every write
}

func (e *WriteDeniedError) Error() string { return "policy: " + e.Denial() }

// Denial says what the mode forbids, as a clause for messages shown to the
// model: "mode architect does not allow writing /w/a (it changes no files)".
func (e *WriteDeniedError) Denial() string {
	switch {
	case e.Path == "":
		return fmt.Sprintf("mode %s does not allow file changes", e.Mode)
	case modeFiles(e.Mode) == FilesGlobs:
		return fmt.Sprintf("mode %s does not allow writing %s (outside its allowed_globs)", e.Mode, e.Path)
	}
	return fmt.Sprintf("mode %s does not allow writing %s (it changes no files)", e.Mode, e.Path)
}

// CommandDeniedError is a command the mode does not run. Command is the
// simple command as words (or the typed text, quoted); Reason says why.
type CommandDeniedError struct {
	Mode    string
	Command string
	Reason  string
}

func (e *CommandDeniedError) Error() string {
	return fmt.Sprintf("policy: mode %s does not allow %q: %s", e.Mode, e.Command, e.Reason)
}

// CommandParseError is a command line the policy could not read, so it was
// denied.
type CommandParseError struct {
	Mode string
	Err  *shellparse.ParseError
}

func (e *CommandParseError) Error() string {
	return fmt.Sprintf("policy: mode %s denies a command that could not be parsed: %v", e.Mode, e.Err)
}
func (e *CommandParseError) Unwrap() error { return e.Err }

// ArtifactWriteError is a statically visible write the temporary-artifact
// rules refuse (ArtifactDirs.ForbiddenWrite).
type ArtifactWriteError struct {
	Command string // the command name, or "the redirect >" and the like
	Target  string // as written, with the known variables expanded
	Path    string // resolved
	Reason  string // why the path is refused: "is another session's temporary directory"
}

func (e *ArtifactWriteError) Error() string {
	return fmt.Sprintf("policy: %s writes %s (%s), which %s", e.Command, e.Target, e.Path, e.Reason)
}
