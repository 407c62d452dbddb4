package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// Limits of what is read from /proc.
const (
	// maxProcFileBytes bounds one /proc/<pid>/status, stat or fdinfo file
	// read (a status is about 1.5 KiB; a stat line is bounded by the
	// kernel's own fields and a 16-byte command name).
	maxProcFileBytes = 64 << 10
	// MaxAncestry bounds the ancestry walk of a peer: a chain longer than
	// this (nothing real nests so deep) counts as broken.
	MaxAncestry = 1024
)

// Confinement is how the kernel confines a process, as /proc/<pid>/status
// tells it: the fields a confined session's launcher changes (it sets
// no_new_privs and installs seccomp filters) and that no process can undo.
// A field the kernel does not report (NoNewPrivs before Linux 4.10,
// Seccomp_filters before 5.9) reads as zero.
type Confinement struct {
	NoNewPrivs     bool // "NoNewPrivs: 1"
	Seccomp        int  // "Seccomp:" mode: 0 off, 1 strict, 2 filter
	SeccompFilters int  // "Seccomp_filters:": filters attached to the process
}

// MoreThan reports whether c is confined beyond o in any way: no_new_privs
// where o has none, a stricter seccomp mode, or more seccomp filters. These
// only ever grow down a process tree (a child inherits them and cannot drop
// them), so a process confined beyond a server was started inside some
// confinement the server is not in.
func (c Confinement) MoreThan(o Confinement) bool {
	return c.NoNewPrivs && !o.NoNewPrivs || c.Seccomp > o.Seccomp || c.SeccompFilters > o.SeccompFilters
}

func (c Confinement) String() string {
	nnp := 0
	if c.NoNewPrivs {
		nnp = 1
	}
	return fmt.Sprintf("no_new_privs=%d seccomp=%d filters=%d", nnp, c.Seccomp, c.SeccompFilters)
}

// ErrProcGone: the process named is not in /proc (it exited, or it is not
// visible from this pid namespace).
var ErrProcGone = errors.New("wire: process not found in /proc")

// Proc reads processes from a proc file system mounted at Root ("" means
// /proc); tests give a directory laid out like one.
type Proc struct {
	Root string
}

func (p Proc) path(pid int, name string) string {
	root := p.Root
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(root, strconv.Itoa(pid), name)
}

// read reads one file of pid within maxProcFileBytes.
func (p Proc) read(pid int, name string) ([]byte, error) {
	f, err := os.Open(p.path(pid, name))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: pid %d", ErrProcGone, pid)
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxProcFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxProcFileBytes {
		return nil, fmt.Errorf("wire: %s is over %d bytes", p.path(pid, name), maxProcFileBytes)
	}
	return b, nil
}

// Confinement reads the confinement of pid from its status file.
func (p Proc) Confinement(pid int) (Confinement, error) {
	b, err := p.read(pid, "status")
	if err != nil {
		return Confinement{}, err
	}
	return parseStatus(b)
}

// Parent reads the parent pid of pid from its stat line; 0 for a process
// without one (pid 1, kernel threads) or one outside this pid namespace.
func (p Proc) Parent(pid int) (int, error) {
	b, err := p.read(pid, "stat")
	if err != nil {
		return 0, err
	}
	return parseStatPPID(b)
}

// Ancestry returns the ancestors of pid, its parent first, up to the first
// process without a parent (pid 1, or the namespace's root). complete is
// false when the walk stopped early: an ancestor exited meanwhile, its
// stat could not be read (another user's process under hidepid), the
// chain loops, or it is longer than MaxAncestry. An ancestor that exits
// during the walk has its children reparented to the nearest subreaper,
// so a guardian (a subreaper of its session) stays on a walk that starts
// again; a walk that breaks is reported so, never guessed across.
func (p Proc) Ancestry(pid int) (ancestors []int, complete bool, err error) {
	ppid, err := p.Parent(pid)
	if err != nil {
		return nil, false, err
	}
	seen := map[int]bool{pid: true}
	for ppid > 0 {
		if seen[ppid] || len(ancestors) >= MaxAncestry {
			return ancestors, false, nil
		}
		seen[ppid] = true
		ancestors = append(ancestors, ppid)
		next, err := p.Parent(ppid)
		if err != nil {
			return ancestors, false, nil
		}
		ppid = next
	}
	return ancestors, true, nil
}

// FDPid reads the pid a pidfd of this process (fd) refers to from
// /proc/self/fdinfo: the kernel reports -1 once that process has been
// reaped (and 0 when it lives outside this pid namespace). ok is false
// when the descriptor is not a pidfd or its fdinfo cannot be read.
func (p Proc) FDPid(fd int) (pid int, ok bool) {
	root := p.Root
	if root == "" {
		root = "/proc"
	}
	f, err := os.Open(filepath.Join(root, "self", "fdinfo", strconv.Itoa(fd)))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxProcFileBytes))
	if err != nil {
		return 0, false
	}
	v, ok := statusField(b, "Pid")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}

// parseStatus reads the confinement fields of a /proc/<pid>/status file.
// A field that is missing reads as zero (older kernels); one that is
// present but malformed is an error, so a garbled file never reads as
// "unconfined" by accident.
func parseStatus(b []byte) (Confinement, error) {
	var c Confinement
	for _, f := range []struct {
		name string
		set  func(int)
	}{
		{"NoNewPrivs", func(n int) { c.NoNewPrivs = n != 0 }},
		{"Seccomp", func(n int) { c.Seccomp = n }},
		{"Seccomp_filters", func(n int) { c.SeccompFilters = n }},
	} {
		v, ok := statusField(b, f.name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Confinement{}, fmt.Errorf("wire: malformed %s in a /proc status: %q", f.name, v)
		}
		f.set(n)
	}
	return c, nil
}

// statusField returns the value of the "name:\tvalue" line of a status or
// fdinfo file, trimmed.
func statusField(b []byte, name string) (string, bool) {
	prefix := []byte(name + ":")
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, prefix); ok {
			return string(bytes.TrimSpace(v)), true
		}
	}
	return "", false
}

// parseStatPPID reads the parent pid of a /proc/<pid>/stat line. The
// command name may hold spaces and parentheses, so the fields are counted
// after its last ')': state, then ppid (proc(5)).
func parseStatPPID(b []byte) (int, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("wire: malformed /proc stat line")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, fmt.Errorf("wire: malformed /proc stat line")
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil || ppid < 0 {
		return 0, fmt.Errorf("wire: malformed ppid in a /proc stat line: %q", f[1])
	}
	return ppid, nil
}
