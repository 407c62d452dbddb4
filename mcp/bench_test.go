package mcp_test

// Benchmarks of one stdio round trip through the real newline framer: a
// server from NewServer served by ServeStdio over two io.Pipe pairs, and a
// client goroutine (the benchmark loop) that writes one request line and
// reads one response line per iteration. Allocations include the client's,
// which are kept near zero so the numbers are the server's.
//
//	go test ./mcp -run='^$' -bench=Stdio -benchmem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"winx/mcp"
)

// benchModernMeta makes a request a stateless 2026-07-28 one.
const benchModernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}`

// benchEras are the two ways a request reaches the server: modern with its
// _meta, or legacy on the connection that initialize opened.
var benchEras = []struct {
	name   string
	legacy bool
	meta   string // a params member, or ""
}{
	{"era=modern", false, benchModernMeta},
	{"era=legacy", true, ""},
}

// benchParams builds a params object from JSON members, skipping empty ones.
func benchParams(members ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for _, m := range members {
		if m == "" {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	b.WriteByte('}')
	return b.String()
}

func BenchmarkStdioToolsList(b *testing.B) {
	for _, era := range benchEras {
		b.Run(era.name, func(b *testing.B) {
			params := benchParams(era.meta)
			benchStdio(b, era.legacy, "tools/list", params, []byte(`"tools":[{"name":"echo"`))
		})
	}
}

func BenchmarkStdioToolCall(b *testing.B) {
	for _, era := range benchEras {
		b.Run(era.name, func(b *testing.B) {
			params := benchParams(era.meta, `"name":"echo"`, `"arguments":{"text":"hello, winx"}`)
			benchStdio(b, era.legacy, "tools/call", params, []byte(`"text":"hello, winx"`))
		})
	}
}

// textEchoRegistry holds one trivial tool that returns its text argument: the
// catalog of the benchmarks and of the protocol transcripts.
func textEchoRegistry() *mcp.Registry {
	reg := mcp.NewRegistry()
	reg.AddTool(mcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return mcp.ErrorResult("echo: " + err.Error()), nil
		}
		return mcp.TextResult(in.Text), nil
	})
	return reg
}

// benchClient is the benchmark's end of the two pipes.
type benchClient struct {
	w   *io.PipeWriter
	r   *bufio.Reader
	buf []byte
	id  int64
}

// roundTrip sends one request and returns the response line, which is valid
// until the next call.
func (c *benchClient) roundTrip(b *testing.B, method, params string) []byte {
	c.id++
	c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	c.buf = strconv.AppendInt(c.buf, c.id, 10)
	c.buf = append(c.buf, `,"method":"`...)
	c.buf = append(c.buf, method...)
	c.buf = append(c.buf, `","params":`...)
	c.buf = append(c.buf, params...)
	c.buf = append(c.buf, "}\n"...)
	if _, err := c.w.Write(c.buf); err != nil {
		b.Fatalf("write %s: %v", method, err)
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		b.Fatalf("read %s answer: %v", method, err)
	}
	return line
}

func benchStdio(b *testing.B, legacy bool, method, params string, want []byte) {
	srv := mcp.NewServer(mcp.Implementation{Name: "bench", Version: "0"}, textEchoRegistry(), nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStdio(ctx, inR, outW, nil)
		outW.Close()
	}()
	defer func() {
		inW.Close() // EOF ends ServeStdio
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			b.Errorf("ServeStdio: %v", err)
		}
	}()
	c := &benchClient{w: inW, r: bufio.NewReaderSize(outR, 64<<10)}
	if legacy {
		line := c.roundTrip(b, "initialize",
			`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}`)
		if !bytes.Contains(line, []byte(`"protocolVersion":"2025-11-25"`)) {
			b.Fatalf("initialize answered %s", line)
		}
		if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			b.Fatal(err)
		}
	}
	// One checked round trip before timing, so a broken request fails loudly.
	if line := c.roundTrip(b, method, params); !bytes.Contains(line, want) || bytes.Contains(line, []byte(`"error":`)) {
		b.Fatalf("%s answered %s, want it to contain %s", method, line, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		if line := c.roundTrip(b, method, params); bytes.Contains(line, []byte(`"error":`)) {
			b.Fatalf("%s answered %s", method, line)
		}
	}
}
