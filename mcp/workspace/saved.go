package workspace

// Saved contexts: one private file per task id under
// <state>/contexts/<id>.txt, written atomically and durably, read back
// bounded for Initialize's task_id_to_resume. Each principal has its own
// state directory (PrincipalStateDir), so task ids never cross principals.

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"winx/edit/atomicfile"
)

const (
	// MaxTaskIDLen bounds a task id (1..64 bytes of [A-Za-z0-9_.-]).
	MaxTaskIDLen = 64
	// MaxSavedContextBytes bounds a saved context file read back; what
	// Save writes stays well below it.
	MaxSavedContextBytes = 2 << 20
	// maxSavedHeaderLines bounds the header lines parsed.
	maxSavedHeaderLines = 32
)

// SavedContextMagic is the first line of every saved context file.
const SavedContextMagic = "# Winx saved context"

// ErrTaskNotFound: no saved context has the id (or what is saved under it
// is not a saved context).
var ErrTaskNotFound = errors.New("workspace: saved task not found")

// TaskIDError is a task id that cannot name a saved context. Msg says why,
// for the model.
type TaskIDError struct {
	ID  string
	Msg string
}

func (e *TaskIDError) Error() string { return "workspace: invalid task id: " + e.Msg }

// ValidTaskID reports whether id may name a saved context (a *TaskIDError
// when not): it becomes a file name, so only a small alphabet, no leading
// dot (no "..", no hidden files) and no separator.
func ValidTaskID(id string) error {
	if id == "" || len(id) > MaxTaskIDLen {
		return &TaskIDError{ID: id, Msg: fmt.Sprintf("task id must be 1 to %d characters", MaxTaskIDLen)}
	}
	if id[0] == '.' {
		return &TaskIDError{ID: id, Msg: fmt.Sprintf("task id %q must not start with a dot", id)}
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return &TaskIDError{ID: id, Msg: fmt.Sprintf("task id %q may only hold A-Z, a-z, 0-9, '_', '.' and '-'", id)}
		}
	}
	return nil
}

// NewTaskID is a fresh random task id.
func NewTaskID() string {
	var b [6]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return "task-" + hex.EncodeToString(b[:])
}

// PrincipalStateDir is the state directory of principal's saved contexts,
// edit receipts and undo records: stateDir itself for the local or
// single-token caller (principal ""), so what it saved before still
// resumes, else stateDir/principals/<hex SHA-256 of the name>. A hash, not
// the name, so that no name can spell a path; "" stays "".
func PrincipalStateDir(stateDir, principal string) string {
	if stateDir == "" || principal == "" {
		return stateDir
	}
	sum := sha256.Sum256([]byte(principal))
	return filepath.Join(stateDir, "principals", hex.EncodeToString(sum[:]))
}

// ContextPath is where the context of task id is saved.
func ContextPath(stateDir, id string) string {
	return filepath.Join(stateDir, "contexts", id+".txt")
}

// writeSaved replaces path with b atomically and durably: a 0600 file in a
// private 0700 directory, file and directory fsynced. A reader sees the old
// file or the new one, never a part.
func writeSaved(path string, b []byte) error {
	if err := atomicfile.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, 0o600, atomicfile.Durability{SyncFile: true, SyncDir: true})
}

// SavedContext is a saved context read back.
type SavedContext struct {
	ID        string
	Root      string // project root as saved
	Text      string // the file, at most MaxSavedContextBytes
	Truncated bool   // the file was longer than MaxSavedContextBytes
}

// Load reads the context saved under id. Errors: *TaskIDError for a
// malformed id, ErrTaskNotFound (naming the id) when nothing is saved under
// it, or a read error.
func Load(stateDir, id string) (*SavedContext, error) {
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	if stateDir == "" {
		return nil, fmt.Errorf("%w: no saved context has id %q (this server has no state directory); call Initialize without task_id_to_resume",
			ErrTaskNotFound, id)
	}
	path := ContextPath(stateDir, id)
	// Never follow a link planted in the state directory.
	b, _, err := readLimited(path, syscall.O_NOFOLLOW, MaxSavedContextBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: no saved context has id %q; save one with ContextSave or call Initialize without task_id_to_resume",
			ErrTaskNotFound, id)
	case errors.Is(err, syscall.ELOOP), errors.Is(err, ErrNotRegularFile):
		return nil, fmt.Errorf("%w: the saved context of %q is not a regular file", ErrTaskNotFound, id)
	case err != nil:
		return nil, err
	}
	sc := &SavedContext{ID: id}
	if len(b) > MaxSavedContextBytes {
		b, sc.Truncated = CutToLine(b[:MaxSavedContextBytes]), true
	}
	sc.Text = string(b)
	if sc.Root, err = savedRoot(sc.Text); err != nil {
		return nil, fmt.Errorf("%w: the saved context of %q is damaged: %v", ErrTaskNotFound, id, err)
	}
	return sc, nil
}

// RootMismatchError is a saved context resumed for a workspace other than
// the one it was saved for.
type RootMismatchError struct {
	ID    string
	Saved string // the project root as saved
}

func (e *RootMismatchError) Error() string {
	return fmt.Sprintf("workspace: task %s was saved for %s", e.ID, e.Saved)
}

// CheckRoot checks that a session in root, a canonical workspace root, may
// resume sc: root must be sc's project root (canonicalized), else a
// *RootMismatchError rather than a guess between the two.
func (sc *SavedContext) CheckRoot(root string) error {
	saved := sc.Root
	if c, err := canonicalPath(saved); err == nil {
		saved = c
	}
	if root != saved {
		return &RootMismatchError{ID: sc.ID, Saved: sc.Root}
	}
	return nil
}

// Excerpt is the saved context as an answer shows it: a heading, the text
// fenced and cut to whole lines within about tokens, and where the whole
// file is when it was cut.
func (sc *SavedContext) Excerpt(stateDir string, tokens int) string {
	text, limit := sc.Text, tokens*bytesPerToken
	truncated := sc.Truncated
	if len(text) > limit {
		text, truncated = string(CutToLine([]byte(text[:limit]))), true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Resumed task %s\n", sc.ID)
	b.WriteString(Fenced(text))
	if truncated {
		fmt.Fprintf(&b, "[saved context truncated to about %d tokens; the whole file is %s]\n", tokens, ContextPath(stateDir, sc.ID))
	}
	return b.String()
}

// savedRoot finds the project_root line of a saved context's header.
func savedRoot(text string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 64<<10)
	if !sc.Scan() || sc.Text() != SavedContextMagic {
		return "", errors.New("it does not start with the saved context header")
	}
	for n := 0; n < maxSavedHeaderLines && sc.Scan() && sc.Text() != ""; n++ {
		if v, ok := strings.CutPrefix(sc.Text(), "project_root: "); ok {
			root, err := strconv.Unquote(v)
			if err != nil || root == "" {
				return "", errors.New("its project_root is malformed")
			}
			return root, nil
		}
	}
	return "", errors.New("its header has no project_root")
}

// OpenWithDesktop shows a saved context to the user: it starts the
// desktop's default opener (xdg-open, or open on macOS) on path in its own
// session, does not wait for it, and returns the opener's name.
func OpenWithDesktop(path string) (string, error) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	go cmd.Wait() // reap it; how it ends does not matter
	return name, nil
}
