package policy

// The temporary-artifact rules of BashCommand (docs/tools.md, "BashCommand"), the
// part decided on the parsed line: which statically visible writes are
// refused, and which lines are cleanup commands that run while a budget is
// exceeded. Measuring the budgets belongs to guardian/artifacts, and
// answering to mcp/tools.

import (
	"path/filepath"
	"slices"
	"strings"

	"winx/auth/policy/shellparse"
)

// ArtifactDirs locates the temporary-artifact directories for one session's
// check. The layout is guardian/artifacts' (<root>/.winx/tmp/session-<id>/);
// policy, under auth, does not import it, so the caller hands it over.
type ArtifactDirs struct {
	Root string // canonical workspace root
	Dir  string // the directory holding every session's directory (artifacts.Dir(Root))
	Own  string // this session's directory in Dir, its WINX_TEMP_DIR
	// SessionID returns the id a directory name in Dir carries, and
	// whether the name is a session's (artifacts.SessionID).
	SessionID func(name string) (id string, ok bool)
}

// ForbiddenWrite returns the first write of cmds the rules refuse, as an
// *ArtifactWriteError, or nil: a write into another session's directory or
// into Dir outside any session's directory, a removal of a directory holding every session's (Dir, .winx, the root or
// above), or a reserved <root>/.winx-* path (see writeTargets for which
// commands and redirects count as writes). Relative targets are resolved
// against cwd (the shell's directory), the workspace root, and the
// directories of literal cd commands earlier on the line. Words whose value
// is only known at run time are skipped, except that $WINX_TEMP_DIR and
// $WINX_WORKSPACE_ROOT are taken to hold what Winx exported.
func (d ArtifactDirs) ForbiddenWrite(cmds []shellparse.Command, cwd string) error {
	id, _ := d.SessionID(filepath.Base(d.Own))
	vars := map[string]string{"WINX_TEMP_DIR": d.Own, "WINX_WORKSPACE_ROOT": d.Root}
	dirs := []string{cwd}
	if cwd != d.Root {
		dirs = append(dirs, d.Root)
	}
	for _, c := range cmds {
		for _, t := range writeTargets(c, vars) {
			for _, p := range resolveTargets(t.target, dirs) {
				if reason := d.forbiddenPath(p, id, t.removes, t.dest); reason != "" {
					return &ArtifactWriteError{Command: t.command, Target: t.target, Path: p, Reason: reason}
				}
			}
		}
		if len(c.Args) == 2 && c.Args[0] == "cd" && !c.Dynamic && len(dirs) < maxTrackedDirs {
			dir, ok := staticWord(c.Args[1], c.ArgIsDynamic(1), vars)
			if !ok || strings.ContainsAny(dir, "*?[") {
				continue
			}
			for _, base := range dirs {
				if filepath.IsAbs(dir) {
					dirs = append(dirs, filepath.Clean(dir))
				} else {
					dirs = append(dirs, filepath.Join(base, dir))
				}
			}
		}
	}
	return nil
}

// maxTrackedDirs bounds the directories one line's cd commands add.
const maxTrackedDirs = 16

// writeTarget is one path a command writes.
type writeTarget struct {
	command string
	target  string // with the known variables expanded
	removes bool   // the command removes or moves it away
	// dest: the target is a destination that receives content (the last
	// operand or -t of cp, install, ln, rsync and mv).
	dest bool
}

// Commands whose operands are written, and which of their options take a
// value (so the value is not taken for an operand).
var (
	// Every operand is written (created, changed or removed).
	allOperandWriters = []string{"rm", "rmdir", "unlink", "touch", "mkdir", "tee", "truncate", "shred", "mkfifo", "mv"}
	// Operands that disappear: writing to an ancestor of another
	// session's directory is refused only for these.
	removers = []string{"rm", "rmdir", "unlink", "shred", "mv"}
	// The last operand, or -t/--target-directory, is written.
	destinationWriters = []string{"cp", "install", "ln", "rsync"}
	valueOptions       = map[string][]string{
		"touch": {"-d", "-r", "-t", "--date", "--reference"}, "truncate": {"-s", "-r", "--size", "--reference"},
		"mkdir": {"-m", "--mode"}, "install": {"-m", "-o", "-g", "-S", "--mode", "--owner", "--group", "--suffix"},
		"cp": {"-S", "--suffix"}, "ln": {"-S", "--suffix"}, "mv": {"-S", "--suffix"}, "rsync": {"-e", "--rsh"},
		"shred": {"-n", "-s", "--iterations", "--size"}, "mkfifo": {"-m", "--mode"},
	}
)

// writeTargets lists what c statically writes: the targets of its output
// redirects and the operands of the write commands above (dd: of=).
// Commands behind wrappers (sudo, env, nohup...) are separate commands of
// the parser's answer and are checked on their own.
func writeTargets(c shellparse.Command, vars map[string]string) []writeTarget {
	var out []writeTarget
	for _, r := range c.Redirects {
		if !isOutputRedirect(r) {
			continue
		}
		if t, ok := staticWord(r.Target, r.Dynamic, vars); ok {
			out = append(out, writeTarget{command: "the redirect " + r.Op, target: t})
		}
	}
	if len(c.Args) == 0 || c.Dynamic {
		return out
	}
	name := c.Args[0]
	removes := slices.Contains(removers, name)
	add := func(i int, w string, dest bool) {
		if t, ok := staticWord(w, c.ArgIsDynamic(i), vars); ok && t != "" {
			out = append(out, writeTarget{command: name, target: t, removes: removes, dest: dest})
		}
	}
	type operand struct {
		i int
		w string
	}
	var operands []operand
	var targetDir *operand
	values := valueOptions[name]
	for i := 1; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case name == "dd":
			if of, ok := strings.CutPrefix(a, "of="); ok {
				operands = append(operands, operand{i, of})
			}
		case a == "--":
			for j := i + 1; j < len(c.Args); j++ {
				operands = append(operands, operand{j, c.Args[j]})
			}
			i = len(c.Args)
		case a == "-t" || a == "--target-directory":
			if i+1 < len(c.Args) {
				targetDir = &operand{i + 1, c.Args[i+1]}
				i++
			}
		case strings.HasPrefix(a, "--target-directory="):
			targetDir = &operand{i, strings.TrimPrefix(a, "--target-directory=")}
		case slices.Contains(values, a):
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			operands = append(operands, operand{i, a})
		}
	}
	switch {
	case name == "dd" || slices.Contains(allOperandWriters, name):
		for k, o := range operands {
			add(o.i, o.w, name == "mv" && targetDir == nil && k == len(operands)-1)
		}
		if targetDir != nil {
			add(targetDir.i, targetDir.w, name == "mv")
		}
	case slices.Contains(destinationWriters, name):
		if targetDir != nil {
			add(targetDir.i, targetDir.w, true)
		} else if len(operands) > 0 {
			o := operands[len(operands)-1]
			add(o.i, o.w, true)
		}
	}
	return out
}

// staticWord returns the value of a word as far as it is known before the
// command runs: a literal word as is; a dynamic one with $WINX_TEMP_DIR,
// $WINX_WORKSPACE_ROOT (vars) expanded, if nothing else in it is an
// expansion, a tilde or a brace pattern. Globs stay in the answer for
// resolveTargets. ok is false for a word that is not statically known.
func staticWord(w string, dynamic bool, vars map[string]string) (string, bool) {
	if !dynamic {
		return w, true
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] != '$' {
			b.WriteByte(w[i])
			continue
		}
		rest := w[i+1:]
		name, braced := "", false
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "", false
			}
			name, braced = rest[1:end], true
		} else {
			n := 0
			for n < len(rest) && (rest[n] == '_' || 'A' <= rest[n] && rest[n] <= 'Z' || 'a' <= rest[n] && rest[n] <= 'z' || n > 0 && '0' <= rest[n] && rest[n] <= '9') {
				n++
			}
			name = rest[:n]
		}
		v, ok := vars[name]
		if !ok {
			return "", false
		}
		b.WriteString(v)
		i += len(name)
		if braced {
			i += 2
		}
	}
	s := b.String()
	if strings.ContainsAny(s, "`{}") || strings.HasPrefix(s, "~") {
		return "", false
	}
	return s, true
}

// resolveTargets returns the absolute, cleaned paths a target may name:
// itself if absolute, else relative to each of dirs. Glob patterns are
// expanded against the file system as well, so a pattern naming existing
// directories of other sessions is seen.
func resolveTargets(t string, dirs []string) []string {
	var bases []string
	if filepath.IsAbs(t) {
		bases = []string{filepath.Clean(t)}
	} else {
		for _, d := range dirs {
			bases = append(bases, filepath.Join(d, t))
		}
	}
	out := bases
	if strings.ContainsAny(t, "*?[") {
		for _, b := range bases {
			m, err := filepath.Glob(b)
			if err == nil && len(m) <= maxGlobMatches {
				out = append(out, m...)
			}
		}
	}
	return out
}

// maxGlobMatches bounds the expansion of one glob target.
const maxGlobMatches = 4096

// forbiddenPath says why writing the cleaned absolute path p is refused for
// session id, "" when it is not: it is inside another session's directory,
// directly in Dir outside any session's directory (unless it removes it),
// the write removes a directory holding every session's (Dir, .winx, the
// root or above), or it is a reserved .winx-* name at the root.
func (d ArtifactDirs) forbiddenPath(p, id string, removes, dest bool) string {
	if removes && (p == d.Dir || strings.HasPrefix(d.Dir, p+"/") || p == "/") {
		return "holds the temporary directories of every session"
	}
	if dest && p == d.Dir {
		return "would put entries directly in .winx/tmp, outside any session's directory"
	}
	rel, err := filepath.Rel(d.Root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	if strings.HasPrefix(strings.Split(filepath.ToSlash(rel), "/")[0], ".winx-") {
		return "is a reserved .winx-* path at the workspace root"
	}
	rel, err = filepath.Rel(d.Dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	name, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	other, ok := d.SessionID(name)
	if ok && other != id {
		return "is another session's temporary directory"
	}
	if !ok && strings.ContainsAny(name, "*?[") {
		// An unexpanded pattern at the session level may match sessions
		// that do not exist yet; only one matching no session name passes.
		// The sample is a session name of Own's form with an id of zeros.
		own := filepath.Base(d.Own)
		sample := strings.TrimSuffix(own, id) + strings.Repeat("0", len(id))
		if m, _ := filepath.Match(name, sample); m {
			return "may name another session's temporary directory"
		}
	}
	if !ok && (!removes || dest) {
		// Outside every session directory nothing is any session's to
		// count or reclaim; removing such a stray entry is still allowed.
		return "is in .winx/tmp outside any session's directory"
	}
	return ""
}

// cleanupCommands may run while the session is over its budget.
var cleanupCommands = []string{"rm", "rmdir", "ls", "du", "find", "stat", "cd", "pwd", "true"}

// CleanupCommandList is what IsCleanup allows, for messages.
const CleanupCommandList = "rm, rmdir, ls, du, find (without -exec, -ok or -fprint), stat, cd, pwd and true"

// findWriteActions are find actions that run programs or write files.
var findWriteActions = []string{"-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}

// IsCleanup reports whether every simple command of the parsed line (the
// parser reports those inside substitutions and behind wrappers too) is a
// cleanup command: one of rm, rmdir, ls, du, find, stat, cd, pwd and true,
// named literally, without variable assignments, without output redirects
// other than to /dev/null or between descriptors, and for find without
// actions that run programs or write files.
func IsCleanup(cmds []shellparse.Command) bool {
	if len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if len(c.Args) == 0 || c.Dynamic || len(c.Assignments) > 0 || !slices.Contains(cleanupCommands, c.Args[0]) {
			return false
		}
		for _, r := range c.Redirects {
			if isOutputRedirect(r) && (r.Dynamic || r.Target != "/dev/null") {
				return false
			}
		}
		if c.Args[0] == "find" && slices.ContainsFunc(c.Args[1:], func(a string) bool { return slices.Contains(findWriteActions, a) }) {
			return false
		}
	}
	return true
}

// isOutputRedirect reports a redirect that opens its target for writing
// (>, >>, >|, &>, &>>, <>, n>, {fd}>, >&file); a duplication between
// descriptors (2>&1, >&-) opens nothing.
func isOutputRedirect(r shellparse.Redirect) bool {
	if !strings.Contains(r.Op, ">") {
		return false
	}
	if strings.HasSuffix(r.Op, "&") {
		t := r.Target
		return !(t == "-" || (t != "" && strings.Trim(t, "0123456789") == ""))
	}
	return true
}
