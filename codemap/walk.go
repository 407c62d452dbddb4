package codemap

// Walking a repository for navigation. The walk answers "which files are the
// project's own source": codemap/walk does the walking (it honours
// .gitignore files the way git does, never enters version-control and Winx
// state or vendored trees, never follows a symbolic link); this file keeps
// what codemap parses and bounds the number of files it will look at.
//
// Left out besides what codemap/walk skips:
//   - minified bundles (*.min.js, *.min.mjs, *.min.cjs);
//   - files larger than MaxSourceBytes, and files whose language codemap does
//     not parse (LanguageOf);
//   - symbolic links, to files and directories alike: a link can only lead
//     out of the root or to something the walk reaches anyway.
//
// Generated files ("Code generated ... DO NOT EDIT." near the top) are
// recognised by the Index when it reads them, not here, so the walk never
// opens a source file.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"winx/codemap/walk"
)

// Walk limits.
const (
	// MaxWalkFiles bounds the regular files a walk looks at (ignored files
	// and skipped trees do not count). A tree beyond it is refused with a
	// *WalkLimitError rather than answered from an arbitrary part.
	MaxWalkFiles = 200_000
	// MaxIgnoreFileBytes bounds one .gitignore or info/exclude file; the
	// rest of a longer file is not read.
	MaxIgnoreFileBytes = walk.MaxIgnoreFileBytes
	// MaxWalkDepth bounds directory nesting below the root.
	MaxWalkDepth = walk.MaxDepth
)

// ErrTooManyFiles is wrapped by *WalkLimitError.
var ErrTooManyFiles = errors.New("codemap: too many files to walk")

// WalkLimitError is a tree with more than Limit files under Dir.
type WalkLimitError struct {
	Dir   string // slash-separated, relative to the root; "" is the root
	Limit int
}

func (e *WalkLimitError) Error() string {
	dir := e.Dir
	if dir == "" {
		dir = "."
	}
	return fmt.Sprintf("%v: more than %d files under %s; narrow the path", ErrTooManyFiles, e.Limit, dir)
}

func (e *WalkLimitError) Unwrap() error { return ErrTooManyFiles }

// File is one source file a walk found.
type File struct {
	Rel     string // slash-separated path relative to the root
	Lang    string // LanguageOf
	Size    int64
	ModTime int64 // modification time, Unix nanoseconds
}

// Walk lists the source files under dir (slash-separated, relative to root;
// "" for the whole root) in lexical order of their paths, applying the
// ignore files of root and of every directory on the way to dir. root must
// be an absolute directory path. A dir that is itself ignored or skipped
// yields no files; a dir that names a source file yields that file.
func Walk(ctx context.Context, root, dir string) ([]File, error) {
	return walkSource(ctx, root, dir, MaxWalkFiles)
}

// walkSource is Walk refusing trees of more than limit regular files.
func walkSource(ctx context.Context, root, dir string, limit int) ([]File, error) {
	dir = walk.CleanRel(dir)
	var out []File
	seen := 0 // regular files looked at
	// The project's own code, as git sees it.
	opts := walk.Options{Skip: walk.SkipState | walk.SkipDeps, Ignore: true}
	err := walk.Walk(ctx, root, dir, opts, func(e walk.Entry) error {
		if !e.Type.IsRegular() {
			return nil // directories are entered, links and the rest left out
		}
		// A file asked for by name is answered whatever its name says.
		asked := e.Rel == dir
		if !asked {
			seen++
			if seen > limit {
				return &WalkLimitError{Dir: dir, Limit: limit}
			}
		}
		lang, ok := LanguageOf(e.Rel)
		if !ok || !asked && isMinified(e.Rel) {
			return nil
		}
		info, err := e.Info()
		if err != nil || info.Size() > MaxSourceBytes {
			return nil
		}
		out = append(out, File{Rel: e.Rel, Lang: lang, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func isMinified(name string) bool {
	lower := strings.ToLower(name)
	for _, ext := range []string{".min.js", ".min.mjs", ".min.cjs"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// generatedMarkerWindow is how much of a file's head is searched for the
// "Code generated ... DO NOT EDIT." line.
const generatedMarkerWindow = 4096

// isGenerated reports whether src's head holds a line saying it is
// generated: the Go convention ("// Code generated ... DO NOT EDIT."),
// accepted in any comment syntax.
func isGenerated(src []byte) bool {
	head := src[:min(len(src), generatedMarkerWindow)]
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if i := bytes.Index(line, []byte("Code generated ")); i >= 0 && bytes.Contains(line[i:], []byte("DO NOT EDIT")) {
			return true
		}
	}
	return false
}
