package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
)

// lineSignal is a writer that reports each completed line on a channel
// and keeps nothing, like a stdout pipe drained by the client.
type lineSignal struct{ done chan struct{} }

func (w lineSignal) Write(p []byte) (int, error) {
	if bytes.IndexByte(p, '\n') >= 0 {
		w.done <- struct{}{}
	}
	return len(p), nil
}

// BenchmarkConnLargeAnswer is one call answered with a large encoded
// result (a ReadFiles answer of a 2,000-line file is about 200 KB) through
// a Conn and the newline framer: the answer's path from handler to the
// stdio pipe, the encoding and framing copies included.
//
//	go test ./jsonrpc -run='^$' -bench=ConnLargeAnswer -benchmem
func BenchmarkConnLargeAnswer(b *testing.B) {
	for _, size := range []int{24 << 10, 200 << 10} {
		b.Run("size="+strconv.Itoa(size>>10)+"KB", func(b *testing.B) {
			result, err := json.Marshal(map[string]string{"text": strings.Repeat("x", size)})
			if err != nil {
				b.Fatal(err)
			}
			pr, pw := io.Pipe()
			out := lineSignal{done: make(chan struct{}, 1)}
			h := HandlerFunc(func(context.Context, *Request) (json.RawMessage, error) { return result, nil })
			c := NewConn(NewLineReader(pr, 0), NewLineWriter(out), h, &ConnOptions{EncodedResults: true})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go c.Run(ctx)
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"read"}` + "\n")
			b.SetBytes(int64(len(result)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pw.Write(req); err != nil {
					b.Fatal(err)
				}
				<-out.done
			}
			pw.Close()
		})
	}
}
