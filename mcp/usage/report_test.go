package usage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReportAggregation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clk := &clock{start}
	l := mustOpen(t, path, Options{Rotation: RotateHourly, Now: clk.Now, Build: "test"})
	record := func(e Entry) {
		t.Helper()
		clk.t = clk.t.Add(time.Minute)
		if err := l.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	// ReadFiles: durations 1..100 ms, sizes 10..1000 bytes, spread over two
	// hours so the report crosses a rotated file.
	for i := 1; i <= 100; i++ {
		record(Entry{Tool: "ReadFiles", Outcome: OutcomeOK, Status: "completed",
			DurationMs: float64(i), ResponseBytes: 10 * i, Principal: "alice", Correlation: "t-read"})
	}
	const dA, dB = "digest-a", "digest-b"
	bash := func(principal, thread, digest, outcome, status string) {
		record(Entry{Tool: "BashCommand", Outcome: outcome, Status: status, DurationMs: 5,
			ResponseBytes: 50, Principal: principal, Correlation: thread, ArgsDigest: digest})
	}
	bash("alice", "t1", dA, OutcomeToolError, "failed")                                                                             // rejected
	bash("bob", "t1", dA, OutcomeOK, "completed")                                                                                   // another principal in between
	bash("alice", "t2", dB, OutcomeOK, "completed")                                                                                 // another thread of alice in between
	bash("alice", "t1", dA, OutcomeToolError, "failed")                                                                             // retried unchanged (1)
	bash("alice", "t1", dA, OutcomeOK, "denied")                                                                                    // retried unchanged (2); denied is rejected
	bash("alice", "t1", dA, OutcomeOK, "completed")                                                                                 // retried unchanged (3)
	bash("alice", "t1", dA, OutcomeOK, "completed")                                                                                 // after a success: not counted
	bash("alice", "t1", dB, OutcomeProtocolError, "")                                                                               // rejected
	bash("alice", "t1", dA, OutcomeOK, "completed")                                                                                 // changed arguments: not counted
	bash("carol", "t9", "", OutcomeToolError, "failed")                                                                             // rejected, no digest
	bash("carol", "t9", "", OutcomeToolError, "failed")                                                                             // no digest: never counted
	bash("dave", "t3", dA, OutcomeOK, "completed_with_issues")                                                                      // rejected by the literal rule
	record(Entry{Tool: "ReadFiles", Outcome: OutcomeOK, Status: "completed", Principal: "dave", Correlation: "t3", ArgsDigest: dA}) // other tool: not counted

	// Garbage a crash or a hand edit could leave: not JSON, JSON but not a
	// record, an overlong line; the valid line after them still counts.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n{\"tool\":\"x\"}\n" + strings.Repeat("x", MaxLineSize+10) + "\n\n")
	f.Close()
	record(Entry{Tool: "Initialize", Outcome: OutcomeOK, Status: "completed", DurationMs: 7, ResponseBytes: 3})

	if files, _ := rotatedFiles(path); len(files) < 1 {
		t.Fatalf("no rotated files: the report test should cross one")
	}
	es, err := ReadEntries(path, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if es.Malformed != 3 {
		t.Errorf("Malformed = %d, want 3", es.Malformed)
	}
	s := Summarize(es)
	if s.Records != 114 {
		t.Errorf("Records = %d, want 114", s.Records)
	}
	if s.RetriedUnchanged != 3 {
		t.Errorf("RetriedUnchanged = %d, want 3", s.RetriedUnchanged)
	}
	byName := map[string]ToolSummary{}
	for _, ts := range s.Tools {
		byName[ts.Tool] = ts
	}
	if len(s.Tools) != 3 || s.Tools[0].Tool != "BashCommand" || s.Tools[2].Tool != "ReadFiles" {
		t.Errorf("Tools = %v, want BashCommand, Initialize, ReadFiles", s.Tools)
	}
	rf := byName["ReadFiles"]
	// 101 calls: the dave call adds 0 ms and 0 bytes at the bottom, and the
	// nearest ranks ceil(0.50*101)=51 and ceil(0.95*101)=96 land on 50 and 95.
	wantRF := ToolSummary{Tool: "ReadFiles", Calls: 101, OK: 101, P50Ms: 50, P95Ms: 95,
		Bytes: 50500, P95Bytes: 950}
	if rf != wantRF {
		t.Errorf("ReadFiles = %+v, want %+v", rf, wantRF)
	}
	bc := byName["BashCommand"]
	wantBC := ToolSummary{Tool: "BashCommand", Calls: 12, OK: 7, ToolErrors: 4, ProtocolErrors: 1,
		Rejected: 7, P50Ms: 5, P95Ms: 5, Bytes: 600, P95Bytes: 50, RetriedUnchanged: 3}
	if bc != wantBC {
		t.Errorf("BashCommand = %+v, want %+v", bc, wantBC)
	}

	// since and last.
	since := start.Add(110 * time.Minute)
	es, err = ReadEntries(path, since, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es.Records) != 5 || es.Records[0].Time.Before(since) {
		t.Errorf("ReadEntries(since %v) = %d records from %v, want 5", since, len(es.Records), es.Records[0].Time)
	}
	es, err = ReadEntries(path, time.Time{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := tools(es.Records); len(got) != 2 || got[0] != "ReadFiles" || got[1] != "Initialize" {
		t.Errorf("ReadEntries(last 2) = %v, want [ReadFiles Initialize]", got)
	}

	text := Summarize(Entries{}).Text()
	if !strings.Contains(text, "no rejected call was retried unchanged") {
		t.Errorf("empty Text() = %q, want the retry check to pass", text)
	}
	text = s.Text()
	for _, want := range []string{"114 records", "3 malformed", "BashCommand", "p95_ms", "3 rejected calls retried unchanged"} {
		if !strings.Contains(text, want) {
			t.Errorf("Text() = %q, want it to contain %q", text, want)
		}
	}
	t.Logf("\n%s", text)
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 50, 0},
		{"one", []float64{7}, 95, 7},
		{"two p50", []float64{2, 1}, 50, 1},
		{"two p95", []float64{2, 1}, 95, 2},
		{"ten p50", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 50, 5},
		{"ten p95", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 95, 10},
		{"twenty p95", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 95, 19},
	}
	for _, tt := range tests {
		if got := percentile(tt.xs, tt.p); got != tt.want {
			t.Errorf("%s: percentile(%v, %v) = %v, want %v", tt.name, tt.xs, tt.p, got, tt.want)
		}
	}
}

func TestReadEntriesMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	if _, err := ReadEntries(path, time.Time{}, 0); err == nil {
		t.Errorf("ReadEntries(no files) = nil error, want not-exist")
	}
	// Only a rotated file: fine.
	os.WriteFile(path+".20260301", []byte(`{"time":"2026-03-01T00:00:00Z","tool":"a","outcome":"ok"}`+"\n"), 0o600)
	es, err := ReadEntries(path, time.Time{}, 0)
	if err != nil || len(es.Records) != 1 {
		t.Errorf("ReadEntries(rotated only) = %d records, %v; want 1, nil", len(es.Records), err)
	}
	// A final line without newline (a crash mid-write of the last line is
	// malformed, a complete one is read).
	os.WriteFile(path, []byte(`{"time":"2026-03-02T00:00:00Z","tool":"b","outcome":"ok"}`+"\n"+`{"time":"2026-03-02T00:00:01Z","tool":"c","outcome":"ok"}`), 0o600)
	es, err = ReadEntries(path, time.Time{}, 0)
	if got := tools(es.Records); err != nil || len(got) != 3 || got[2] != "c" {
		t.Errorf("ReadEntries(unterminated last line) = %v, %v; want [a b c]", got, err)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"time":"2026-03-01T00:00:00Z","tool":"a","outcome":"ok","durationMs":1.5}`))
	f.Add([]byte(`{"time":"","tool":"a","outcome":"ok"}`))
	f.Add([]byte(`{"tool":1}`))
	f.Add([]byte(`{"timestamp":"2026-03-01T00:00:00Z","level":"INFO","fields":{"event":"tool_call","tool":"a","outcome":"ok","duration_ms":1.5},"target":"winx::usage"}`))
	f.Add([]byte(`{"timestamp":"x","fields":{"initialize_transition":1}}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := parseLine(line)
		if !ok {
			return
		}
		if r.Time.IsZero() || r.Tool == "" || !validOutcome(r.Outcome) {
			t.Fatalf("parseLine(%q) accepted %+v", line, r)
		}
	})
}

// TestSchemaVersions: records of the current schema carry their type, version
// and request id; a rejected call of an older schema followed by the same
// call is unverifiable, not a retry, and HTTP request events are not calls.
func TestSchemaVersions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.jsonl")
	old := `{"time":"2026-03-01T10:00:00Z","tool":"BashCommand","outcome":"tool_error","principal":"p","correlation":"c","argsDigest":"d"}` + "\n" +
		`{"time":"2026-03-01T10:00:01Z","tool":"BashCommand","outcome":"tool_error","principal":"p","correlation":"c","argsDigest":"d"}` + "\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := &clock{time.Date(2026, 3, 1, 10, 0, 2, 0, time.UTC)}
	l := mustOpen(t, path, Options{Now: clk.Now})
	if err := l.Record(Entry{Type: EventHTTPRequest, RequestID: "0123abcd", Method: "POST", Path: "/mcp?access_token=x", HTTPStatus: 200}); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Tool: "ReadFiles", Outcome: OutcomeOK, RequestID: "0123abcd"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Type: "other"}); !errors.Is(err, ErrBadEvent) {
		t.Errorf("Record(type other) = %v, want ErrBadEvent", err)
	}
	l.Close()
	es, err := ReadEntries(path, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es.Records) != 4 || es.Malformed != 0 {
		t.Fatalf("read %d records, %d malformed; want 4, 0", len(es.Records), es.Malformed)
	}
	h, c := es.Records[2], es.Records[3]
	if h.Type != EventHTTPRequest || h.Schema != SchemaVersion || h.Path == "/mcp?access_token=x" || h.RequestID != "0123abcd" {
		t.Errorf("http_request record = %+v", h)
	}
	if c.Type != EventToolCall || c.Schema != SchemaVersion || c.RequestID != h.RequestID {
		t.Errorf("tool_call record = %+v, want type, schema and the request's id", c)
	}
	s := Summarize(es)
	if s.RetriedUnchanged != 0 || s.Unverifiable != 2 || s.HTTPRequests != 1 || len(s.Tools) != 2 {
		t.Errorf("Summarize = %+v, want 2 unverifiable, no retry, 1 HTTP request, 2 tools", s)
	}
	if !strings.Contains(s.Text(), "unverifiable") {
		t.Errorf("report text does not mention the unverifiable calls:\n%s", s.Text())
	}
}

// TestReadsEverySchema: one log holding flat schema 2 lines (an earlier
// release's) and the Winx-shaped lines Record writes now reads as one: the
// schema 2 retry is still found, the new lines keep every value, and a
// retry across the two schemas (same digest) counts too.
func TestReadsEverySchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	old := `{"time":"2026-03-01T10:00:00Z","type":"tool_call","schema":2,"tool":"ReadFiles","outcome":"tool_error","status":"failed","principal":"p","correlation":"c","argsDigest":"0123456789abcdef","durationMs":2,"responseBytes":10}` + "\n" +
		`{"time":"2026-03-01T10:00:01Z","type":"tool_call","schema":2,"tool":"ReadFiles","outcome":"tool_error","status":"failed","principal":"p","correlation":"c","argsDigest":"0123456789abcdef","durationMs":4,"responseBytes":10}` + "\n"
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := &clock{time.Date(2026, 3, 1, 10, 0, 2, 0, time.UTC)}
	l := mustOpen(t, path, Options{Now: clk.Now, Build: "b1"})
	if err := l.Record(Entry{Tool: "Initialize", Outcome: OutcomeOK, Status: "completed", DurationMs: 7.5, ResponseBytes: 99,
		Session: "created", ContextBytes: 300, GuidelinesBytes: 40, InitialFiles: 2, ClientName: "Claude Code", ClientVersion: "1.2",
		Protocol: "2025-11-25", Principal: "alice", Correlation: "t1", ArgsDigest: strings.Repeat("ab", 32)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Tool: "ReadFiles", Outcome: OutcomeOK, Batch: 3, WorkerLimit: 4, ClientName: "a\nb"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	es, err := ReadEntries(path, time.Time{}, 0)
	if err != nil || len(es.Records) != 4 || es.Malformed != 0 {
		t.Fatalf("ReadEntries = %d records, %d malformed, %v; want 4, 0", len(es.Records), es.Malformed, err)
	}
	want := Record{Time: clk.t, Type: EventToolCall, Schema: SchemaVersion, Build: "b1", Tool: "Initialize", Outcome: OutcomeOK,
		Status: "completed", DurationMs: 7.5, ResponseBytes: 99, Principal: HashID("alice"), Correlation: HashID("t1"),
		ArgsDigest: strings.Repeat("ab", 8), Session: "created", ContextBytes: 300, GuidelinesBytes: 40, InitialFiles: 2,
		ClientName: "Claude Code", ClientVersion: "1.2", Protocol: "2025-11-25"}
	if got := es.Records[2]; got != want {
		t.Errorf("Initialize read back as\n%+v\nwant\n%+v", got, want)
	}
	if got := es.Records[3]; got.Batch != 3 || got.WorkerLimit != 4 || got.ClientName != "#"+HashID("a\nb") {
		t.Errorf("ReadFiles read back as %+v, want batch 3, worker limit 4, the odd client name hashed", got)
	}
	s := Summarize(es)
	if s.RetriedUnchanged != 1 || s.Unverifiable != 0 || len(s.Tools) != 2 {
		t.Errorf("Summarize = %+v, want the schema 2 retry, nothing unverifiable, 2 tools", s)
	}
}
