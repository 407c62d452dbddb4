package usage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// clock is a fake Options.Now the test moves by hand; Log calls it under its
// own lock, and the tests that move it do not record concurrently.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func readLines(t *testing.T, path string) []Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s line %d: %v: %q", path, i+1, err, line)
		}
		out = append(out, r)
	}
	return out
}

func mustOpen(t *testing.T, path string, opts Options) *Log {
	t.Helper()
	l, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	l := mustOpen(t, path, Options{Build: "v1.2.3"})
	if err := l.Record(Entry{Tool: "ReadFiles", Outcome: OutcomeOK, Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode(); got != 0o600 {
		t.Errorf("mode = %v, want -rw-------", got)
	}
	recs := readLines(t, path)
	if len(recs) != 1 || recs[0].Build != "v1.2.3" || recs[0].Tool != "ReadFiles" {
		t.Errorf("records = %+v, want one ReadFiles record with build v1.2.3", recs)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Tool: "x", Outcome: OutcomeOK}); !errors.Is(err, ErrClosed) {
		t.Errorf("Record after Close = %v, want ErrClosed", err)
	}
}

func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  error
	}{
		{"symlink to private file", func(t *testing.T, path string) {
			target := path + "-target"
			if err := os.WriteFile(target, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, syscall.ELOOP},
		{"dangling symlink", func(t *testing.T, path string) {
			if err := os.Symlink(path+"-missing", path); err != nil {
				t.Fatal(err)
			}
		}, syscall.ELOOP},
		{"mode 0644", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrInsecureFile},
		{"mode 0620", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o620); err != nil {
				t.Fatal(err)
			}
		}, ErrInsecureFile},
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, nil}, // ENXIO (no reader) or ErrInsecureFile; either way not opened
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "usage.jsonl")
			tt.setup(t, path)
			l, err := Open(path, Options{})
			if err == nil {
				l.Close()
				t.Fatalf("Open(%s) = nil error, want a refusal", tt.name)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Open(%s) = %v, want %v", tt.name, err, tt.want)
			}
			if tt.want == syscall.ELOOP && !errors.Is(err, ErrInsecureFile) {
				t.Errorf("Open(%s) = %v, want it to wrap ErrInsecureFile too", tt.name, err)
			}
			var fe *FileError
			if tt.want == ErrInsecureFile && (!errors.As(err, &fe) || fe.Path != path) {
				t.Errorf("Open(%s) = %v, want a *FileError for %s", tt.name, err, path)
			}
		})
	}
	// The refused 0644 file is left alone, not re-moded.
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if err := os.WriteFile(path, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	Open(path, Options{})
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("refused file mode = %v, want it untouched at 0644", fi.Mode())
	}
}

func TestOpenOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if _, err := Open(path, Options{Rotation: "weekly"}); !errors.Is(err, ErrBadRotation) {
		t.Errorf("Open(rotation weekly) = %v, want ErrBadRotation", err)
	}
	l := mustOpen(t, path, Options{})
	if l.rotation != RotateDaily || l.retention != 7*24*time.Hour {
		t.Errorf("defaults = %q, %v; want daily, 168h", l.rotation, l.retention)
	}
	if err := l.Record(Entry{Tool: "x", Outcome: "maybe"}); !errors.Is(err, ErrBadOutcome) {
		t.Errorf("Record(outcome maybe) = %v, want ErrBadOutcome", err)
	}
}

func TestRotation(t *testing.T) {
	plus5 := time.FixedZone("+05", 5*60*60)
	tests := []struct {
		name     string
		rotation string
		before   time.Time // last instant of the first period
		after    time.Time // first instant of the next
		rotated  string    // suffix of the rotated file
	}{
		{"hourly", RotateHourly,
			time.Date(2026, 3, 1, 10, 59, 59, 999e6, time.UTC),
			time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC), ".20260301T10"},
		{"daily", RotateDaily,
			time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC),
			time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), ".20260301"},
		// The stamp is UTC whatever the clock's zone: 04:59 at +05 is 23:59Z.
		{"daily in another zone", RotateDaily,
			time.Date(2026, 3, 2, 4, 59, 0, 0, plus5),
			time.Date(2026, 3, 2, 5, 0, 0, 0, plus5), ".20260301"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "usage.jsonl")
			clk := &clock{tt.before.Add(-30 * time.Minute)}
			l := mustOpen(t, path, Options{Rotation: tt.rotation, Now: clk.Now})
			record := func(tool string) {
				t.Helper()
				if err := l.Record(Entry{Tool: tool, Outcome: OutcomeOK}); err != nil {
					t.Fatalf("Record(%s) = %v", tool, err)
				}
			}
			record("a")
			clk.t = tt.before
			record("b")
			if _, err := os.Lstat(path + tt.rotated); err == nil {
				t.Fatalf("rotated before the period ended")
			}
			clk.t = tt.after
			record("c")
			if got := tools(readLines(t, path+tt.rotated)); !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("rotated file holds %v, want [a b]", got)
			}
			if got := tools(readLines(t, path)); !slices.Equal(got, []string{"c"}) {
				t.Errorf("current file holds %v, want [c]", got)
			}
			for _, p := range []string{path, path + tt.rotated} {
				if fi, _ := os.Lstat(p); fi.Mode() != 0o600 {
					t.Errorf("%s mode = %v, want -rw-------", p, fi.Mode())
				}
			}
			es, err := ReadEntries(path, time.Time{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := tools(es.Records); !slices.Equal(got, []string{"a", "b", "c"}) {
				t.Errorf("ReadEntries = %v, want [a b c]", got)
			}
		})
	}
}

func TestRotationNever(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	clk := &clock{time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC)}
	l := mustOpen(t, path, Options{Rotation: RotateNever, Now: clk.Now})
	for range 3 {
		if err := l.Record(Entry{Tool: "t", Outcome: OutcomeOK}); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(25 * time.Hour)
	}
	if got := len(readLines(t, path)); got != 3 {
		t.Errorf("current file has %d lines, want 3", got)
	}
	if files, _ := rotatedFiles(path); len(files) != 0 {
		t.Errorf("rotated files = %v, want none", files)
	}
}

// A rotated name already taken (clock set back, or a copy left by hand) is
// never overwritten.
func TestRotationCollision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if err := os.WriteFile(path+".20260301T10", []byte("older\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := &clock{time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)}
	l := mustOpen(t, path, Options{Rotation: RotateHourly, Now: clk.Now})
	l.Record(Entry{Tool: "a", Outcome: OutcomeOK})
	clk.t = clk.t.Add(time.Hour)
	if err := l.Record(Entry{Tool: "b", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path + ".20260301T10"); string(data) != "older\n" {
		t.Errorf("existing rotated file = %q, want it untouched", data)
	}
	if got := tools(readLines(t, path+".20260301T10-1")); !slices.Equal(got, []string{"a"}) {
		t.Errorf("collision file holds %v, want [a]", got)
	}
}

// A log left by an earlier run in an earlier period is rotated on the first
// write, not extended.
func TestRotationAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if err := os.WriteFile(path, []byte(`{"time":"2026-02-27T12:00:00Z","tool":"old","outcome":"ok"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2026, 2, 27, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	clk := &clock{time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	l := mustOpen(t, path, Options{Now: clk.Now})
	if err := l.Record(Entry{Tool: "new", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if got := tools(readLines(t, path+".20260227")); !slices.Equal(got, []string{"old"}) {
		t.Errorf("rotated file holds %v, want [old]", got)
	}
	if got := tools(readLines(t, path)); !slices.Equal(got, []string{"new"}) {
		t.Errorf("current file holds %v, want [new]", got)
	}
}

func TestRetention(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.jsonl")
	for _, name := range []string{
		"usage.jsonl.20260210",    // ended Feb 11, older than 14 days on Mar 1
		"usage.jsonl.20260213T23", // ended Feb 14 00:00, older
		"usage.jsonl.20260210-2",  // a collision file, older
		"usage.jsonl.20260215",    // ended Feb 16 00:00, after the cutoff of Feb 15 12:00: kept
		"usage.jsonl.20260220",    // kept
		"usage.jsonl.bak",         // not ours
		"usage.jsonl.2026",        // not ours
		"other.jsonl.20200101",    // not ours
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clk := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	// 14 days, given explicitly: the default is 7 (TestRetentionDefault).
	l := mustOpen(t, path, Options{Now: clk.Now, RetentionDays: 14})
	want := []string{
		"other.jsonl.20200101", "usage.jsonl", "usage.jsonl.2026",
		"usage.jsonl.20260215", "usage.jsonl.20260220", "usage.jsonl.bak",
	}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("after Open: files = %v, want %v", got, want)
	}

	// Rotation prunes too: a day later the Feb 15 file has aged out, and the
	// Mar 1 file is the new rotated one.
	l.Record(Entry{Tool: "a", Outcome: OutcomeOK})
	clk.t = clk.t.Add(24 * time.Hour)
	if err := l.Record(Entry{Tool: "b", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"other.jsonl.20200101", "usage.jsonl", "usage.jsonl.2026",
		"usage.jsonl.20260220", "usage.jsonl.20260301", "usage.jsonl.bak",
	}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("after rotation: files = %v, want %v", got, want)
	}
}

func TestRetentionForever(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.jsonl")
	os.WriteFile(path+".20000101", nil, 0o600)
	clk := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	mustOpen(t, path, Options{Now: clk.Now, RetentionDays: KeepForever})
	if _, err := os.Lstat(path + ".20000101"); err != nil {
		t.Errorf("KeepForever deleted a rotated file: %v", err)
	}
}

func TestConcurrentRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	l := mustOpen(t, path, Options{})
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- l.Record(Entry{
				Tool: fmt.Sprintf("tool%02d", i), Outcome: OutcomeOK, Status: "completed",
				DurationMs: float64(i), ResponseBytes: i * 100, Principal: "alice",
				Correlation: fmt.Sprintf("thread-%d", i), ArgsDigest: strings.Repeat("ab", 32),
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Record = %v", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		seen[r.Tool] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct valid lines, want %d", len(seen), n)
	}
}

// The raw file must contain none of the secrets a caller could hand over by
// mistake, only their hashes.
func TestNoSecretsInLog(t *testing.T) {
	secrets := []string{
		"ghp_0123456789abcdefABCDEF0123456789abcd",
		"sk-live-SECRETSECRETSECRET",
		"Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
		"rm -rf /home/alice/secret-project",
		"AKIAIOSFODNN7EXAMPLE",
	}
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	l := mustOpen(t, path, Options{})
	for _, s := range secrets {
		if err := l.Record(Entry{
			Tool: "BashCommand", Outcome: OutcomeToolError, Status: "failed",
			Principal: "alice", Correlation: s, ArgsDigest: s,
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The principal is always hashed; free text in labels is hashed too.
	if err := l.Record(Entry{
		Tool: secrets[3], Outcome: OutcomeProtocolError, Status: secrets[2],
		ErrorCode: secrets[3] + "!", Principal: secrets[0],
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		for _, frag := range []string{s, s[:12], s[len(s)-12:]} {
			if bytes.Contains(raw, []byte(frag)) {
				t.Errorf("log contains %q (from secret %q)", frag, s)
			}
		}
	}
	recs := readLines(t, path)
	if got, want := recs[0].Correlation, HashID(secrets[0]); got != want {
		t.Errorf("correlation = %q, want HashID = %q", got, want)
	}
	if got, want := recs[0].ArgsDigest, HashID(secrets[0]); got != want {
		t.Errorf("argsDigest = %q, want HashID = %q", got, want)
	}
	if got, want := recs[len(recs)-1].Tool, "#"+HashID(secrets[3]); got != want {
		t.Errorf("free-text tool = %q, want %q", got, want)
	}
	if got, want := recs[len(recs)-1].Principal, HashID(secrets[0]); got != want {
		t.Errorf("principal = %q, want %q", got, want)
	}
}

func TestHashID(t *testing.T) {
	// sha256("winx-usage\x00thread-1"), first 16 hex digits, computed
	// independently with: printf 'winx-usage\0thread-1' | sha256sum
	tests := []struct{ in, want string }{
		{"thread-1", "3864aec1a2b79580"},
	}
	for _, tt := range tests {
		if got := HashID(tt.in); got != tt.want {
			t.Errorf("HashID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if len(HashID("")) != 16 || HashID("a") == HashID("b") {
		t.Errorf("HashID is not a 16-digit discriminating id")
	}
}

func TestLabel(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"BashCommand", "BashCommand"},
		{"needs_read", "needs_read"},
		{"alice-2", "alice-2"},
		{"rm -rf /", "#" + HashID("rm -rf /")},
		{strings.Repeat("a", MaxLabelLen), strings.Repeat("a", MaxLabelLen)},
		{strings.Repeat("a", MaxLabelLen+1), "#" + HashID(strings.Repeat("a", MaxLabelLen+1))},
		{"tööl", "#" + HashID("tööl")},
	}
	for _, tt := range tests {
		if got := label(tt.in); got != tt.want {
			t.Errorf("label(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func tools(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Tool)
	}
	return out
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestRetentionDefault: without RetentionDays, rotated files older than
// seven days go (WINX_USAGE_LOG_KEEP_DAYS defaults to 7).
func TestRetentionDefault(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.jsonl")
	for _, name := range []string{"usage.jsonl.20260220", "usage.jsonl.20260225"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clk := &clock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	mustOpen(t, path, Options{Now: clk.Now})
	want := []string{"usage.jsonl", "usage.jsonl.20260225"}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("after Open with the default retention: files = %v, want %v", got, want)
	}
}

// A full hex digest (the server's keyed HMAC) is written as its first
// ArgsDigestLen digits; anything else only as HashID.
func TestArgsDigestWritten(t *testing.T) {
	full := strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct{ in, want string }{
		{full, full[:ArgsDigestLen]},
		{"", ""},
		{strings.ToUpper(full), HashID(strings.ToUpper(full))},
		{full[:63], HashID(full[:63])},
		{"rm -rf ~", HashID("rm -rf ~")},
	} {
		if got := argsDigest(tc.in); got != tc.want {
			t.Errorf("argsDigest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
