package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"winx/auth"
	"winx/evidence"
)

// Initial files: the files an Initialize call is asked to show right away,
// read with ReadContained and bounded per file and in total.

// Limits of initial files.
const (
	// MaxInitialFiles is how many initial files one call reads.
	MaxInitialFiles = 32
	// MaxInitialFileBytes bounds one initial file's shown content.
	MaxInitialFileBytes = 64 << 10
	// MaxInitialFilesBytes bounds the shown content of all initial files.
	MaxInitialFilesBytes = 256 << 10
)

// Outcomes of an initial file (InitialFile.Status).
const (
	InitialShown     = "shown"
	InitialTruncated = "truncated"
	InitialBinary    = "binary"
	InitialNotFound  = "not_found"
	InitialDenied    = "denied"
	InitialSkipped   = "skipped"
)

// InitialFile is the outcome of one initial file.
type InitialFile struct {
	Path   string // as the client gave it
	Status string // one of the Initial* outcomes
	Bytes  int64  // the file's size, when it was read
	// Canonical, Revision and Shown say what was shown with line numbers,
	// as ReadFiles shows it: the caller records them in the session's
	// read ledger. Revision is "" when the file was shown otherwise.
	Canonical string
	Revision  evidence.Revision
	Shown     evidence.Range
}

// WriteInitialFiles shows the files at paths (absolute, or relative to
// root, and inside it) in b within the limits, and returns the outcome of
// each path in order. A path protected holds (the server's credentials and
// state) is refused, as the file tools refuse it.
func WriteInitialFiles(b *strings.Builder, root string, paths []string, protected *auth.Protected) []InitialFile {
	var out []InitialFile
	budget := MaxInitialFilesBytes
	for i, p := range paths {
		note := InitialFile{Path: p}
		switch {
		case i >= MaxInitialFiles || budget <= 0:
			note.Status = InitialSkipped
			fmt.Fprintf(b, "\n## %s: skipped, over the limit of initial files; read it with ReadFiles\n", p)
			out = append(out, note)
			continue
		case p == "":
			note.Status = InitialNotFound
			b.WriteString("\n## (empty path): not read\n")
			out = append(out, note)
			continue
		}
		f, err := readInitial(root, p, min(MaxInitialFileBytes, budget), protected)
		switch {
		case errors.Is(err, auth.ErrPathProtected):
			note.Status = InitialDenied
			fmt.Fprintf(b, "\n## %s: refused, it is a credential or state path of the server\n", p)
		case errors.Is(err, fs.ErrNotExist):
			note.Status = InitialNotFound
			fmt.Fprintf(b, "\n## %s: not found\n", p)
		case errors.Is(err, ErrOutsideWorkspace):
			note.Status = InitialDenied
			fmt.Fprintf(b, "\n## %s: refused, it resolves outside the workspace %s\n", p, root)
		case err != nil:
			note.Status = InitialDenied
			fmt.Fprintf(b, "\n## %s: not read: %v\n", p, err)
		case f.Binary:
			note.Status, note.Bytes = InitialBinary, f.Size
			fmt.Fprintf(b, "\n## %s: binary file (%d bytes), not shown\n", f.Rel, f.Size)
		case showNumbered(b, f, &note, &budget):
		default:
			note.Status, note.Bytes = InitialShown, f.Size
			budget -= len(f.Content)
			fmt.Fprintf(b, "\n## %s (%d bytes)\n", f.Rel, f.Size)
			b.WriteString(Fenced(string(f.Content)))
			if f.Truncated {
				note.Status = InitialTruncated
				fmt.Fprintf(b, "[%s truncated after %d bytes; read the rest with ReadFiles]\n", f.Rel, len(f.Content))
			}
		}
		out = append(out, note)
	}
	return out
}

// readInitial is ReadContained that first refuses a path protected holds,
// judged on its canonical form so no spelling (a symlink in the workspace,
// "..") gets around it; the read itself is rechecked the same way.
func readInitial(root, p string, limit int, protected *auth.Protected) (*File, error) {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	if cp, err := canonicalPath(abs); err == nil && protected.Contains(cp) {
		return nil, auth.ErrPathProtected
	}
	f, err := ReadContained(root, p, limit)
	if err == nil && protected.Contains(f.Path) {
		return nil, auth.ErrPathProtected
	}
	return f, err
}

// showNumbered shows f the way ReadFiles does (line numbers and the
// revision), from a snapshot of the whole file taken at its canonical
// path, so what is shown can count as read. It reports false, having
// written nothing, when the file changed into something else since
// ReadContained checked it or cannot be snapshotted; the caller then
// shows it as plain content, which counts as no read.
func showNumbered(b *strings.Builder, f *File, note *InitialFile, budget *int) bool {
	snap, err := evidence.ReadSnapshot(f.Path, evidence.DefaultMaxBytes)
	if err != nil || snap.Path != f.Path || evidence.IsBinary(snap.Bytes) {
		return false
	}
	limit := min(MaxInitialFileBytes, *budget)
	view := evidence.Render(snap, evidence.All, max(limit/evidence.BytesPerToken, 1))
	note.Status, note.Bytes = InitialShown, int64(len(snap.Bytes))
	note.Canonical, note.Revision, note.Shown = snap.Path, snap.Revision, view.Shown
	*budget -= len(view.Text)
	fmt.Fprintf(b, "\n## %s (%d bytes)\n", f.Rel, len(snap.Bytes))
	switch {
	case view.Shown.IsZero():
		fmt.Fprintf(b, "revision %s; %d lines; no complete line shown\n", snap.Revision.Short(), view.TotalLines)
	default:
		fmt.Fprintf(b, "revision %s; lines %s of %d\n", snap.Revision.Short(), view.Shown, view.TotalLines)
	}
	if view.Text != "" {
		b.WriteString(Fenced(view.Text))
	}
	if view.Shown.IsZero() && view.TotalLines > 0 {
		note.Revision = "" // no complete line shown: nothing was read
	}
	if view.Truncated {
		note.Status = InitialTruncated
		fmt.Fprintf(b, "[%s truncated after %d bytes; read %s next with ReadFiles]\n", f.Rel, len(view.Text), view.Continuation)
	}
	return true
}
