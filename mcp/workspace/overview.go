package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"winx/auth"
	"winx/codemap/walk"
)

// Limits of the workspace overview Initialize shows the model. Each bounds
// something the workspace controls (file count, names, git output, the
// guideline files' size).
const (
	DefaultOverviewEntries   = 200
	DefaultOverviewTreeBytes = 16 << 10
	DefaultOverviewScan      = 20000
	DefaultGitStatusBytes    = 8 << 10
	DefaultGuidelineBytes    = 8 << 10
	DefaultGitTimeout        = 5 * time.Second
)

// Limits bound NewOverview; a zero field means its default.
type Limits struct {
	MaxEntries        int           // tree entries shown (files and directories)
	MaxTreeBytes      int           // rendered tree size
	MaxScan           int           // files considered before ranking
	MaxStatusBytes    int           // git status output kept
	MaxGuidelineBytes int           // per guideline file
	GitTimeout        time.Duration // per git command, and for the whole walk without git
	// Protected are the server's own paths (auth.Protected): a guideline
	// file that resolves to one is not shown. Nil protects nothing.
	Protected *auth.Protected
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxEntries, DefaultOverviewEntries)
	def(&l.MaxTreeBytes, DefaultOverviewTreeBytes)
	def(&l.MaxScan, DefaultOverviewScan)
	def(&l.MaxStatusBytes, DefaultGitStatusBytes)
	def(&l.MaxGuidelineBytes, DefaultGuidelineBytes)
	if l.GitTimeout <= 0 {
		l.GitTimeout = DefaultGitTimeout
	}
	return l
}

// Overview is what the model is shown of a workspace when its session
// starts: a ranked file tree, git status and agent guideline files.
type Overview struct {
	Root string
	// Git reports that the root is inside a git work tree and git answered;
	// the tree then lists what git does not ignore.
	Git bool
	// Entries are the shown tree entries in rank order: slash-separated
	// paths relative to Root, directories with a trailing "/".
	Entries []string
	// Total counts every entry considered; ScanTruncated reports that
	// MaxScan files were reached and the rest was not looked at.
	Total         int
	ScanTruncated bool
	// GitStatus is `git status --porcelain=v1 -b`, "" when not a repo.
	GitStatus          string
	GitStatusTruncated bool
	Guidelines         []Guideline

	// hidden counts, per shown directory ("" for the root), the direct
	// children that did not fit.
	hidden map[string]int
}

// Guideline is an agent guideline file at the workspace root.
type Guideline struct {
	Path      string // relative to the root
	Content   string
	Truncated bool
}

// guidelineFiles are read at the root only, in this order.
var guidelineFiles = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules", ".github/copilot-instructions.md"}

// Directory classes (codemap/walk) never listed, git or not: VCS internals,
// Winx's own artifacts, dependency trees and virtual environments; and,
// only when git cannot say, the build and cache directories a .gitignore
// would usually hide.
const (
	overviewSkip        = walk.SkipState | walk.SkipDeps
	overviewSkipWithout = overviewSkip | walk.SkipBuild
)

// importantFiles rank first at their depth, in this order; README* matches
// any README with or without an extension.
var importantFiles = []string{
	"README", "go.mod", "package.json", "Makefile", "Cargo.toml", "pyproject.toml",
	"go.work", "setup.py", "requirements.txt", "CMakeLists.txt", "pom.xml", "build.gradle",
	"Gemfile", "composer.json", "Dockerfile", "justfile", "tsconfig.json",
}

var sourceExts = map[string]bool{
	".go": true, ".py": true, ".js": true, ".jsx": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true,
	".rs": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".java": true,
	".rb": true, ".cs": true, ".php": true, ".lua": true, ".ex": true, ".exs": true, ".kt": true,
	".swift": true, ".scala": true, ".sh": true, ".bash": true, ".zsh": true, ".sql": true,
	".proto": true, ".vue": true, ".svelte": true, ".dart": true, ".zig": true, ".hs": true,
	".ml": true, ".clj": true, ".jl": true, ".m": true, ".mm": true, ".r": true,
}

// NewOverview builds the overview of the canonical directory root. When
// root is in a git work tree it lists what `git ls-files --cached --others
// --exclude-standard` names; otherwise (or when git is missing or fails) it
// walks the tree skipping the built-in classes of directories. It fails
// only when root is unusable (a root that is not a directory is a
// *fs.PathError wrapping syscall.ENOTDIR) or ctx ends.
func NewOverview(ctx context.Context, root string, limits Limits) (Overview, error) {
	lim := limits.withDefaults()
	ov := Overview{Root: root}
	fi, err := os.Stat(root)
	if err != nil {
		return ov, err
	}
	if !fi.IsDir() {
		return ov, &fs.PathError{Op: "overview", Path: root, Err: syscall.ENOTDIR}
	}
	var files []scannedFile
	var git *gitRunner
	gerr := errNoRepository
	if mayBeInRepository(root) {
		git, gerr = newGitRunner(ctx, root, lim.GitTimeout)
	}
	if gerr == nil && git.workTree(ctx, lim.GitTimeout) {
		if files, ov.ScanTruncated, err = git.files(ctx, root, lim); err == nil {
			ov.Git = true
		}
	}
	if !ov.Git {
		if files, ov.ScanTruncated, err = walkFiles(ctx, root, lim); err != nil {
			return ov, err
		}
	}
	ov.rank(files, lim)
	if ov.Git {
		// Submodules are not entered: git would run there under the
		// submodule's configuration, whose drivers the runner has not listed.
		out, truncated, err := git.run(ctx, lim.GitTimeout, lim.MaxStatusBytes, "status", "--porcelain=v1", "-b", "--ignore-submodules=dirty")
		if err == nil {
			ov.GitStatus, ov.GitStatusTruncated = string(out), truncated
		}
	}
	ov.Guidelines = readGuidelines(root, lim.MaxGuidelineBytes, lim.Protected)
	return ov, ctx.Err()
}

// readGuidelines reads the guideline files at root that are text and
// resolve inside it, each cut to whole lines within limit bytes.
func readGuidelines(root string, limit int, protected *auth.Protected) []Guideline {
	policy, err := auth.NewPathPolicy(root, nil)
	if err != nil {
		return nil
	}
	policy = policy.WithProtected(protected)
	var out []Guideline
	for _, name := range guidelineFiles {
		canon, err := policy.Resolve(filepath.FromSlash(name))
		if err != nil {
			continue // absent or outside the workspace: nothing to show
		}
		buf, _, reason := readBounded(policy, canon, limit)
		if reason != "" {
			continue
		}
		g := Guideline{Path: name}
		if len(buf) > limit {
			buf, g.Truncated = CutToLine(buf[:limit]), true
		}
		if slices.Contains(buf, 0) {
			continue // not text
		}
		g.Content = string(buf)
		out = append(out, g)
	}
	return out
}

// scannedFile is one listed path.
type scannedFile struct {
	rel string // slash-separated, relative to the root
	dir bool   // a submodule or other directory git names as one entry
	mod time.Time
}

// walkFiles lists files below root without git, skipping the built-in
// classes of directories, within the git timeout and MaxScan files.
func walkFiles(ctx context.Context, root string, lim Limits) ([]scannedFile, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, lim.GitTimeout)
	defer cancel()
	var files []scannedFile
	truncated := false
	err := walk.Walk(ctx, root, "", walk.Options{Skip: overviewSkipWithout}, func(e walk.Entry) error {
		if e.IsDir() {
			return nil
		}
		if len(files) == lim.MaxScan {
			truncated = true
			return fs.SkipAll
		}
		var mod time.Time
		if info, err := e.Info(); err == nil {
			mod = info.ModTime()
		}
		files = append(files, scannedFile{rel: e.Rel, mod: mod})
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return files, true, nil // out of time: what was listed stands
	}
	return files, truncated, err
}

// rankedEntry is one file or directory of the tree.
type rankedEntry struct {
	rel       string
	name      string
	depth     int
	dir       bool
	mod       time.Time // newest file inside, for directories
	tier      int
	important int // index in importantFiles for tier 0
}

// Tiers order entries of one depth: important files, directories, source
// files, other files, then hidden entries.
const (
	tierImportant = iota
	tierDir
	tierSource
	tierOther
	tierHidden
)

// rank builds the entries of files (and the directories holding them),
// orders them by depth then importance, and keeps the head within the
// entry and byte budgets. Depth comes first, so every kept entry's parent
// is kept too.
func (ov *Overview) rank(files []scannedFile, lim Limits) {
	byRel := make(map[string]*rankedEntry)
	children := make(map[string]int) // direct children per directory ("" = root)
	add := func(rel string, dir bool, mod time.Time) {
		if e, ok := byRel[rel]; ok {
			if mod.After(e.mod) {
				e.mod = mod
			}
			return
		}
		e := &rankedEntry{rel: rel, name: path.Base(rel), depth: strings.Count(rel, "/"), dir: dir, mod: mod}
		e.tier, e.important = entryTier(e.name, dir)
		byRel[rel] = e
		children[parentOf(rel)]++
	}
	for _, f := range files {
		for d := parentOf(f.rel); d != ""; d = parentOf(d) {
			add(d, true, f.mod)
		}
		add(f.rel, f.dir, f.mod)
	}
	entries := make([]*rankedEntry, 0, len(byRel))
	for _, e := range byRel {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, compareEntries)
	ov.Total = len(entries)
	ov.hidden = make(map[string]int)
	shown := make(map[string]int)          // shown direct children per directory
	shownDirs := map[string]bool{"": true} // the root is always shown
	bytes := 0
	for _, e := range entries {
		cost := 2*e.depth + len(e.name) + 2 + 24 // indent, name, "/", newline, an omission note
		if len(ov.Entries) == lim.MaxEntries || bytes+cost > lim.MaxTreeBytes {
			break
		}
		bytes += cost
		name := e.rel
		if e.dir {
			name += "/"
		}
		ov.Entries = append(ov.Entries, name)
		shown[parentOf(e.rel)]++
		shownDirs[e.rel] = e.dir
	}
	for dir, n := range children {
		if shownDirs[dir] && shown[dir] < n {
			ov.hidden[dir] = n - shown[dir]
		}
	}
}

func compareEntries(a, b *rankedEntry) int {
	switch {
	case a.depth != b.depth:
		return a.depth - b.depth
	case a.tier != b.tier:
		return a.tier - b.tier
	case a.important != b.important:
		return a.important - b.important
	case !a.mod.Equal(b.mod):
		return b.mod.Compare(a.mod) // newest first
	}
	return strings.Compare(a.rel, b.rel)
}

func entryTier(name string, dir bool) (tier, important int) {
	switch {
	case strings.HasPrefix(name, "."):
		return tierHidden, 0
	case dir:
		return tierDir, 0
	}
	for i, imp := range importantFiles {
		if name == imp || imp == "README" && strings.HasPrefix(strings.ToUpper(name), "README") {
			return tierImportant, i
		}
	}
	if sourceExts[strings.ToLower(path.Ext(name))] {
		return tierSource, 0
	}
	return tierOther, 0
}

func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// Text renders the overview for the model.
func (ov Overview) Text() string {
	var b strings.Builder
	kind := "directory (not a git repository)"
	if ov.Git {
		kind = "git work tree"
	}
	fmt.Fprintf(&b, "## Workspace %s\n%s; %d of %d entries shown", ov.Root, kind, len(ov.Entries), ov.Total)
	if ov.ScanTruncated {
		b.WriteString(", listing stopped early (too many files)")
	}
	b.WriteString(", ranked by depth and importance.\n")
	if len(ov.Entries) == 0 {
		b.WriteString("(no files)\n")
	}
	ov.writeTree(&b)
	if ov.Git {
		b.WriteString("\n## git status\n")
		b.WriteString(ov.GitStatus)
		if ov.GitStatusTruncated {
			b.WriteString("\n[git status truncated]")
		}
		if !strings.HasSuffix(ov.GitStatus, "\n") {
			b.WriteString("\n")
		}
	}
	for _, g := range ov.Guidelines {
		fmt.Fprintf(&b, "\n## Guidelines from %s\n", g.Path)
		b.WriteString(Fenced(g.Content))
		if g.Truncated {
			fmt.Fprintf(&b, "[%s truncated; read the rest with ReadFiles]\n", g.Path)
		}
	}
	return b.String()
}

// writeTree writes the shown entries as an indented tree: each directory's
// children in rank order, with a count of those that did not fit.
func (ov Overview) writeTree(b *strings.Builder) {
	kids := make(map[string][]string)
	for _, e := range ov.Entries {
		rel := strings.TrimSuffix(e, "/")
		kids[parentOf(rel)] = append(kids[parentOf(rel)], e)
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		for _, e := range kids[dir] {
			rel := strings.TrimSuffix(e, "/")
			b.WriteString(strings.Repeat("  ", depth))
			b.WriteString(path.Base(rel))
			if strings.HasSuffix(e, "/") {
				b.WriteString("/")
				if n := ov.hidden[rel]; n > 0 {
					fmt.Fprintf(b, " (%d more not shown)", n)
				}
				b.WriteString("\n")
				walk(rel, depth+1)
				continue
			}
			b.WriteString("\n")
		}
	}
	walk("", 0)
	if n := ov.hidden[""]; n > 0 {
		fmt.Fprintf(b, "(%d more top-level entries not shown)\n", n)
	}
}
