package usage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// MaxLineSize bounds one line of the log when reading it back; longer lines
// are skipped as malformed. Written lines are a few hundred bytes.
const MaxLineSize = 64 << 10

// Entries is what ReadEntries found.
type Entries struct {
	Records   []Record // oldest first, in the order they were written
	Malformed int      // lines skipped: not JSON, not a record, or too long
}

// ReadEntries reads the rotated files of the log at path and then the current
// one, and returns the records at or after since (zero: all), keeping only the
// last ones when last > 0. A missing current file is not an error unless no
// rotated file exists either.
func ReadEntries(path string, since time.Time, last int) (Entries, error) {
	var es Entries
	files, err := rotatedFiles(path)
	if err != nil {
		return es, err
	}
	paths := make([]string, 0, len(files)+1)
	for _, r := range files {
		paths = append(paths, r.path)
	}
	paths = append(paths, path)
	found := 0
	for _, p := range paths {
		err := readFile(p, since, &es)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a rotated file pruned meanwhile, or no current file yet
		}
		if err != nil {
			return es, err
		}
		found++
	}
	if found == 0 {
		return es, fmt.Errorf("usage: no log at %s: %w", path, fs.ErrNotExist)
	}
	if last > 0 && len(es.Records) > last {
		es.Records = slices.Clip(es.Records[len(es.Records)-last:])
	}
	return es, nil
}

func readFile(path string, since time.Time, es *Entries) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return &FileError{Path: path, Mode: fi.Mode(), Reason: "not a regular file"}
	}
	br := bufio.NewReaderSize(f, MaxLineSize)
	for {
		line, tooLong, err := readLine(br)
		if tooLong {
			es.Malformed++
		} else if len(bytes.TrimSpace(line)) > 0 {
			if r, ok := parseLine(line); !ok {
				es.Malformed++
			} else if since.IsZero() || !r.Time.Before(since) {
				es.Records = append(es.Records, r)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("usage: %s: %w", path, err)
		}
	}
}

// readLine returns the next line without its newline. A line longer than
// MaxLineSize is consumed and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	line, err = br.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], false, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, false, err
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = br.ReadSlice('\n')
	}
	return nil, true, err
}

// parseLine decodes one line and accepts it only if it is a record: an
// object with a time and a known outcome.
func parseLine(line []byte) (Record, bool) {
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, false
	}
	switch {
	case r.Time.IsZero():
		return Record{}, false
	case r.Type == EventHTTPRequest:
		if r.Method == "" {
			return Record{}, false
		}
	case r.Type != "" && r.Type != EventToolCall, r.Tool == "", !validOutcome(r.Outcome):
		return Record{}, false
	}
	return r, true
}

// ToolSummary aggregates the calls of one tool.
type ToolSummary struct {
	Tool           string
	Calls          int
	OK             int
	ToolErrors     int
	ProtocolErrors int
	Rejected       int // calls for which Record.Rejected is true
	P50Ms, P95Ms   float64
	Bytes          int64 // total response bytes
	P95Bytes       int
	// RetriedUnchanged counts calls of this tool that repeated a rejected call
	// unchanged; see Summary.RetriedUnchanged.
	RetriedUnchanged int
}

// Summary aggregates Entries.
type Summary struct {
	Records   int
	Malformed int
	From, To  time.Time     // times of the first and last record
	Tools     []ToolSummary // sorted by tool name
	// RetriedUnchanged counts calls that directly followed a rejected call of
	// the same caller with the same tool and argument digest. The caller's
	// stream is its (principal, correlation) pair, so interleaved threads of
	// one principal do not hide or fake a retry. Calls without an argument
	// digest are never counted.
	RetriedUnchanged int
	// Unverifiable counts tool calls of an older schema (Record.Version
	// below retryCheckSince): the retry check skips them rather than judge
	// them by rules they were not written for.
	Unverifiable int
	// HTTPRequests counts the http_request records; they are not calls.
	HTTPRequests int
}

// Summarize aggregates es. Percentiles use the nearest-rank method.
func Summarize(es Entries) Summary {
	s := Summary{Records: len(es.Records), Malformed: es.Malformed}
	for i := range es.Records {
		r := &es.Records[i]
		if r.Type == EventHTTPRequest {
			s.HTTPRequests++
		} else if r.Version() < retryCheckSince {
			s.Unverifiable++
		}
	}
	type stream struct{ principal, correlation string }
	lastOf := make(map[stream]*Record)
	byTool := make(map[string]*ToolSummary)
	durations := make(map[string][]float64)
	sizes := make(map[string][]int)
	for i := range es.Records {
		r := &es.Records[i]
		if r.Type == EventHTTPRequest {
			continue
		}
		if s.From.IsZero() || r.Time.Before(s.From) {
			s.From = r.Time
		}
		if r.Time.After(s.To) {
			s.To = r.Time
		}
		t := byTool[r.Tool]
		if t == nil {
			t = &ToolSummary{Tool: r.Tool}
			byTool[r.Tool] = t
		}
		t.Calls++
		switch r.Outcome {
		case OutcomeOK:
			t.OK++
		case OutcomeToolError:
			t.ToolErrors++
		case OutcomeProtocolError:
			t.ProtocolErrors++
		}
		if r.Rejected() {
			t.Rejected++
		}
		t.Bytes += int64(r.ResponseBytes)
		durations[r.Tool] = append(durations[r.Tool], r.DurationMs)
		sizes[r.Tool] = append(sizes[r.Tool], r.ResponseBytes)

		k := stream{r.Principal, r.Correlation}
		if r.Version() < retryCheckSince {
			// An older record's digest and statuses may not mean what this
			// check assumes: it can be neither a retry nor the call one
			// repeats. It is counted as unverifiable, never as a violation.
			delete(lastOf, k)
			continue
		}
		if prev := lastOf[k]; prev != nil && prev.Rejected() && r.ArgsDigest != "" &&
			prev.Tool == r.Tool && prev.ArgsDigest == r.ArgsDigest {
			s.RetriedUnchanged++
			t.RetriedUnchanged++
		}
		lastOf[k] = r
	}
	for name, t := range byTool {
		t.P50Ms = percentile(durations[name], 50)
		t.P95Ms = percentile(durations[name], 95)
		t.P95Bytes = percentile(sizes[name], 95)
		s.Tools = append(s.Tools, *t)
	}
	slices.SortFunc(s.Tools, func(a, b ToolSummary) int { return strings.Compare(a.Tool, b.Tool) })
	return s
}

// percentile returns the nearest-rank p-th percentile of xs, sorting xs.
func percentile[T int | float64](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	rank := int(math.Ceil(p / 100 * float64(len(xs))))
	return xs[max(rank, 1)-1]
}

// Text renders s as a compact table, one row per tool, and the retry check.
func (s Summary) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d records", s.Records)
	if s.Malformed > 0 {
		fmt.Fprintf(&b, ", %d malformed lines skipped", s.Malformed)
	}
	if s.Records > 0 {
		fmt.Fprintf(&b, ", %s to %s", s.From.UTC().Format(time.RFC3339), s.To.UTC().Format(time.RFC3339))
	}
	b.WriteString("\n")
	if len(s.Tools) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "tool\tcalls\tok\ttool_err\tproto_err\trejected\tp50_ms\tp95_ms\tbytes\tp95_bytes\tretried\t")
		for _, t := range s.Tools {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%d\t%d\t%d\t\n",
				t.Tool, t.Calls, t.OK, t.ToolErrors, t.ProtocolErrors, t.Rejected,
				t.P50Ms, t.P95Ms, t.Bytes, t.P95Bytes, t.RetriedUnchanged)
		}
		tw.Flush()
	}
	if s.Unverifiable > 0 {
		fmt.Fprintf(&b, "retry check: %d calls of an older log schema (before %d) are unverifiable and not checked\n", s.Unverifiable, retryCheckSince)
	}
	if s.RetriedUnchanged == 0 {
		b.WriteString("retry check: no rejected call was retried unchanged\n")
	} else {
		fmt.Fprintf(&b, "retry check: %d rejected calls retried unchanged\n", s.RetriedUnchanged)
	}
	return b.String()
}
