package mcp_test

// Protocol transcripts as goldens: each testdata/transcripts/*.txtar holds
// a client's request lines (section "client") and the server's answers
// (section "server"), one JSON-RPC message per line, so that a reviewer
// reads what each MCP era does on the wire without reading Go. The test
// drives a stdio server with the client lines in order, waiting for the
// answer to each request before the next line, and compares what came
// back, normalised, with the server section. `go test ./mcp -run
// TestTranscripts -update` rewrites the server sections.
//
// The txtar format is parsed here by hand (it is tiny): optional comment
// lines, then files, each introduced by a line "-- NAME --".

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"winx/mcp"
)

var update = flag.Bool("update", false, "rewrite the server sections of testdata/transcripts/*.txtar with what the server answers now")

// transcriptTimeout bounds the wait for one answer.
const transcriptTimeout = 10 * time.Second

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	Name string
	Data string
}

// parseTxtar splits an archive into its comment and its files.
func parseTxtar(data string) (comment string, files []txtarFile) {
	lines := strings.SplitAfter(data, "\n")
	var cur *txtarFile
	var b strings.Builder
	flush := func() {
		if cur == nil {
			comment = b.String()
		} else {
			cur.Data = b.String()
			files = append(files, *cur)
		}
		b.Reset()
	}
	for _, line := range lines {
		if name, ok := txtarMarker(line); ok {
			flush()
			cur = &txtarFile{Name: name}
			continue
		}
		b.WriteString(line)
	}
	flush()
	return comment, files
}

// txtarMarker reports whether line is "-- NAME --" and returns NAME.
func txtarMarker(line string) (string, bool) {
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < len("-- x --") {
		return "", false
	}
	name := strings.TrimSpace(line[3 : len(line)-3])
	return name, name != ""
}

// formatTxtar is the inverse of parseTxtar.
func formatTxtar(comment string, files []txtarFile) string {
	var b strings.Builder
	b.WriteString(comment)
	for _, f := range files {
		fmt.Fprintf(&b, "-- %s --\n", f.Name)
		b.WriteString(f.Data)
		if f.Data != "" && !strings.HasSuffix(f.Data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// volatile are members whose values change from run to run; their values
// are replaced by "<volatile>" before comparing.
var volatile = map[string]bool{
	"requestState": true, // sealed with a per-process random key
}

// normalise re-encodes one JSON-RPC line with sorted keys and the volatile
// values replaced.
func normalise(t *testing.T, line string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("the server wrote a line that is not JSON: %q: %v", line, err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if volatile[k] {
					x[k] = "<volatile>"
				} else {
					x[k] = walk(e)
				}
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(walk(v)); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// replay sends the client lines to a fresh stdio server and returns the
// normalised lines it wrote: after a request (a line with an id) it waits
// for the answer with that id, so the order of the answers is the order of
// the requests.
func replay(t *testing.T, client string) []string {
	t.Helper()
	srv := mcp.NewServer(mcp.Implementation{Name: "transcript", Version: "1"}, textEchoRegistry(), nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		err := srv.ServeStdio(ctx, inR, outW, nil)
		outW.Close()
		served <- err
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, mcp.MaxStdioLine)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	next := func() (string, bool) {
		select {
		case l, ok := <-lines:
			return l, ok
		case <-time.After(transcriptTimeout):
			t.Fatalf("no answer within %v; so far:\n%s", transcriptTimeout, strings.Join(got, "\n"))
			return "", false
		}
	}
	for line := range strings.SplitSeq(client, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		// A line that is not JSON is sent as it is: the parse error is
		// answered with a null id.
		isJSON := json.Unmarshal([]byte(line), &msg) == nil
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if isJSON && len(msg.ID) == 0 {
			continue // a notification: no answer
		}
		want := string(msg.ID)
		if !isJSON {
			want = "null"
		}
		for {
			l, ok := next()
			if !ok {
				t.Fatalf("the server ended before answering %s", line)
			}
			got = append(got, normalise(t, l))
			var ans struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal([]byte(l), &ans) == nil && string(ans.ID) == want {
				break
			}
		}
	}
	inW.Close()
	for l := range lines {
		got = append(got, normalise(t, l))
	}
	if err := <-served; err != nil {
		t.Errorf("ServeStdio = %v, want nil at the end of its input", err)
	}
	return got
}

func TestTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no transcripts in testdata/transcripts")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(string(data))
			if len(files) != 2 || files[0].Name != "client" || files[1].Name != "server" {
				t.Fatalf("%s: want the sections client and server, in that order", path)
			}
			got := replay(t, files[0].Data)
			if *update {
				files[1].Data = strings.Join(got, "\n") + "\n"
				if err := os.WriteFile(path, []byte(formatTxtar(comment, files)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var want []string
			for l := range strings.SplitSeq(strings.TrimSpace(files[1].Data), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					want = append(want, normalise(t, l))
				}
			}
			for i := range max(len(got), len(want)) {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("%s: server line %d:\n got %s\nwant %s", path, i+1, g, w)
				}
			}
		})
	}
}

// The hand-written parser reads what it writes and keeps the comment.
func TestTxtarRoundTrip(t *testing.T) {
	for _, in := range []string{
		"",
		"a comment\n-- client --\nline 1\nline 2\n-- server --\n",
		"-- a --\n-- b --\nx\n",
		"not -- a marker --\n-- c --\n--  --\n",
	} {
		c, files := parseTxtar(in)
		if out := formatTxtar(c, files); out != in {
			t.Errorf("formatTxtar(parseTxtar(%q)) = %q", in, out)
		}
	}
}
