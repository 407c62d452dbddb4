package guardian

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"winx/evidence/redact"
)

const testToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"

func newRedactingSession(t *testing.T) *Shell {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewShell(ctx, Options{
		Dir:         t.TempDir(),
		PrivateRoot: t.TempDir(),
		Env:         []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"},
		Shape:       ShapeOptions{ScratchDir: filepath.Join(t.TempDir(), "scratch"), Redactor: redact.New(false)},
	})
	if err != nil {
		t.Fatalf("NewShell: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// journalLines reads a journal file's lines.
func journalLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("journal: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// Output matches the bytes: tabs stay tabs, a line wider than the terminal
// is one line, a 300,000-character line is one line (cut with a note,
// never reported as repeated), and the journal keeps it whole.
func TestOutputLogicalLines(t *testing.T) {
	s := newTestSession(t, "")
	if o := run(t, s, `printf '\tX\tY\n'`, 10*time.Second); o.Output.Text != "\tX\tY" {
		t.Errorf("tabs: %q", o.Output.Text)
	}
	var nums []string
	for i := 1; i <= 120; i++ {
		nums = append(nums, strconv.Itoa(i))
	}
	if o := run(t, s, `seq -s, 1 120`, 10*time.Second); o.Output.Text != strings.Join(nums, ",") {
		t.Errorf("seq -s, 1 120 = %q", o.Output.Text)
	}
	o := run(t, s, `head -c 300000 /dev/zero | tr '\0' a; echo; echo end`, 20*time.Second)
	if strings.Contains(o.Output.Text, "[winx: x") {
		t.Errorf("a long line reported as repeated: %q", o.Output.Text[:200])
	}
	lines := strings.Split(o.Output.Text, "\n")
	if last := lines[len(lines)-1]; len(lines) != 2 || last != "end" ||
		!strings.Contains(lines[0], " bytes cut from the middle of this line; the whole line is line 1 of "+o.Output.Journal) {
		t.Errorf("long line answer: %d lines, first %q, last %q", len(lines), lines[0], last)
	}
	if o.Output.Journal == "" {
		t.Fatal("no journal named")
	}
	j := journalLines(t, o.Output.Journal)
	if len(j) != 2 || j[0] != strings.Repeat("a", 300000) || j[1] != "end" {
		t.Errorf("journal has %d lines (first %d bytes)", len(j), len(j[0]))
	}
	if fi, err := os.Stat(o.Output.Journal); err != nil || fi.Mode().Perm() != 0o600 || strings.HasPrefix(o.Output.Journal, s.opts.Dir) {
		t.Errorf("journal %s: %v, %v", o.Output.Journal, fi.Mode(), err)
	}
}

// Secrets are redacted on logical lines before any wrapping: a token split
// by the terminal's wrap is still found, in the answer, the journal and the
// screen.
func TestOutputRedactedBeforeWrap(t *testing.T) {
	s := newRedactingSession(t)
	aws := "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY12"
	for _, tc := range []struct{ cmd, secret string }{
		{`printf '%0190d ` + testToken + `\n' 0`, testToken[:12]},
		{`printf '%0190d ` + aws + `\n' 0`, "wJalrXUtnFEMI"},
		{`printf '%0195d https://user:pa55w0rd@example.com/x\n' 0`, "pa55w0rd"},
	} {
		o := run(t, s, tc.cmd, 10*time.Second)
		if strings.Contains(o.Output.Text, tc.secret) || !strings.Contains(o.Output.Text, "[REDACTED:") || o.Output.Redactions == 0 {
			t.Errorf("%s: answer %q (%d redactions)", tc.cmd, o.Output.Text, o.Output.Redactions)
		}
		if data, _ := os.ReadFile(o.Output.Journal); strings.Contains(string(data), tc.secret) || len(data) == 0 {
			t.Errorf("%s: journal %q", tc.cmd, data)
		}
		snap := s.Screen(context.Background(), 0, false)
		if rows := strings.Join(snap.Rows, "\n"); strings.Contains(strings.ReplaceAll(rows, "\n", ""), tc.secret) {
			t.Errorf("%s: screen shows the secret:\n%s", tc.cmd, rows)
		}
	}
}

// The partial last line of a running command never shows the start of a
// token; the whole line, once complete, is redacted.
func TestOutputPartialLineHoldsSecret(t *testing.T) {
	s := newRedactingSession(t)
	rest := testToken[len("ghp_abc"):]
	// The rest of the line waits on a FIFO, not on the clock: the command
	// surely runs until the test has looked at its partial line.
	gate := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	o := run(t, s, `printf 'x ghp_abc'; read -r _ < `+gate+`; printf '`+rest+` y\n'`, time.Second)
	// On a loaded machine the first answer may come before printf ran:
	// look again (bounded) until the partial line is there.
	for i := 0; i < 30 && o.Running && !strings.Contains(o.Output.Text, "x") && !strings.Contains(o.Output.Text, "ghp_"); i++ {
		var err error
		if o, err = s.Poll(context.Background(), o.Generation, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if !o.Running || strings.Contains(o.Output.Text, "ghp_") || !strings.Contains(o.Output.Text, "x") {
		t.Errorf("mid-way answer %q (running %v)", o.Output.Text, o.Running)
	}
	snap := s.Screen(context.Background(), 0, false)
	if strings.Contains(strings.Join(snap.Rows, ""), "ghp_") {
		t.Errorf("mid-way screen shows the start of the token: %q", snap.Rows)
	}
	release(t, gate)
	o, err := s.Poll(context.Background(), o.Generation, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o.Running || strings.Contains(o.Output.Text, "ghp_") || !strings.Contains(o.Output.Text, "x [REDACTED:github-token] y") {
		t.Errorf("final answer %q", o.Output.Text)
	}
}

// Output written while nobody polled is in the journal from line 1, and the
// next look says which lines it does not show and where they are.
func TestOutputJournalWhileUnpolled(t *testing.T) {
	s := newTestSession(t, "")
	// Gated by FIFOs, not by the clock: the command is surely running when
	// the first answer comes, prints everything while nobody polls, and
	// ends only when the test says so.
	dir := t.TempDir()
	start, end := filepath.Join(dir, "start"), filepath.Join(dir, "end")
	for _, f := range []string{start, end} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := run(t, s, `read -r _ < `+start+`; seq 1 200000; read -r _ < `+end+`; echo fin`, 100*time.Millisecond)
	if !o.Running {
		t.Fatalf("the gated command is not running: %+v", o)
	}
	release(t, start)
	journal := filepath.Join(s.own.Dir, "output-"+strconv.FormatUint(o.Generation, 10)+".txt")
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Printed output reaches the journal (and the screen sidecar)
		// within persistDelay, unpolled.
		j, _ := os.ReadFile(journal)
		sc, _ := os.ReadFile(journal + ScreenSuffix)
		if strings.Count(string(j)+string(sc), "\n") >= 200000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("seq's output never reached the journal: %d + %d bytes", len(j), len(sc))
		}
		time.Sleep(20 * time.Millisecond)
	}
	release(t, end)
	o, err := s.Poll(context.Background(), o.Generation, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(o.Output.Text, "200000\nfin") || !strings.Contains(o.Output.Text, "are not shown; they are in "+o.Output.Journal+" from line ") {
		t.Errorf("answer head %q tail %q", o.Output.Text[:min(300, len(o.Output.Text))], o.Output.Text[max(0, len(o.Output.Text)-30):])
	}
	j := journalLines(t, o.Output.Journal)
	if len(j) != 200001 || j[0] != "1" || j[199999] != "200000" {
		t.Errorf("journal: %d lines, first %q", len(j), j[0])
	}
}

// release opens the FIFO a gated command reads, so its read returns.
func release(t *testing.T, fifo string) {
	t.Helper()
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
}

// floodEnv names the flood a child test process runs; the parent reads the
// child's peak RSS.
const floodEnv = "WINX_TEST_FLOOD_CMD"

// TestFloodChild runs in a child process only: it runs the flood through a
// Shell and prints the answer, the journal's line count and its peak RSS.
func TestFloodChild(t *testing.T) {
	cmd := os.Getenv(floodEnv)
	if cmd == "" {
		t.Skip("runs as the child of TestFloodMemoryAndJournal")
	}
	s := newTestSession(t, "")
	o := run(t, s, cmd, 10*time.Minute)
	if o.Running {
		t.Fatal("flood did not finish")
	}
	lines, first := 0, ""
	if f, err := os.Open(o.Output.Journal); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			if lines == 0 {
				first = sc.Text()
			}
			lines++
		}
		f.Close()
	}
	fmt.Printf("RESULT lines=%d first=%q lost=%d dropped=%d\n", lines, first, o.Output.LostLines, o.Output.DroppedLines)
	for _, l := range strings.Split(o.Output.Text, "\n") {
		if strings.HasPrefix(l, "[winx: ") {
			fmt.Printf("NOTE %s\n", l)
		}
	}
	fmt.Printf("RSS %s\n", procStatus(t, "VmHWM"))
}

func procStatus(t *testing.T, key string) string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// A flood of 100 MB of short lines and seq 1 20000000 keep the process
// under 64 MiB; the journal starts at line 1, and what its budget dropped
// is named in the answer.
func TestFloodMemoryAndJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("floods take a while")
	}
	if raceEnabled {
		t.Skip("measures RSS and floods 100 MB: run without -race (build.sh test does)")
	}
	for _, tc := range []struct {
		cmd       string
		wantLines int
	}{
		{"yes | head -c 100000000", 50000000},
		{"seq 1 20000000", 20000000},
	} {
		child := exec.Command(os.Args[0], "-test.run=^TestFloodChild$", "-test.count=1")
		child.Env = append(os.Environ(), floodEnv+"="+tc.cmd)
		out, err := child.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.cmd, err, out)
		}
		var lines, lost, dropped int
		var first, rss, note string
		for _, l := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(l, "RESULT "):
				fmt.Sscanf(l, "RESULT lines=%d first=%q lost=%d dropped=%d", &lines, &first, &lost, &dropped)
			case strings.HasPrefix(l, "RSS "):
				rss = strings.TrimPrefix(l, "RSS ")
			case strings.HasPrefix(l, "NOTE "):
				note += l + "\n"
			}
		}
		kb, _ := strconv.Atoi(strings.TrimSuffix(rss, " kB"))
		t.Logf("%s: peak RSS %s, journal %d lines from %q, lost %d; %s", tc.cmd, rss, lines, first, lost, note)
		if kb == 0 || kb > 64<<10 {
			t.Errorf("%s: peak RSS %s, want under 64 MiB", tc.cmd, rss)
		}
		if first != "y" && first != "1" {
			t.Errorf("%s: journal starts %q, want line 1", tc.cmd, first)
		}
		if lines != tc.wantLines && !strings.Contains(note, fmt.Sprintf("holds lines 1-%d of the %d lines of output", lines, tc.wantLines)) {
			t.Errorf("%s: %d lines in the journal and %d lost, want %d in all, named: %s", tc.cmd, lines, lost, tc.wantLines, note)
		}
	}
}

// A session keeps a bounded number of journal files, deleting the oldest.
func TestOutputJournalsBounded(t *testing.T) {
	s := newTestSession(t, "")
	var first string
	for i := range maxJournals + 6 {
		o := run(t, s, "echo "+strconv.Itoa(i), 10*time.Second)
		if i == 0 {
			first = o.Output.Journal
		}
	}
	files, _ := filepath.Glob(filepath.Join(s.own.Dir, "output-*.txt"))
	if len(files) > maxJournals+1 {
		t.Errorf("%d journal files kept, want at most %d", len(files), maxJournals+1)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("the oldest journal %s is still there (%v)", first, err)
	}
}
