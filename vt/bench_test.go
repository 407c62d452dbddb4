package vt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchChunk is the size of one write, about what one read from a PTY
// master returns under load.
const benchChunk = 4096

// plainText is n bytes of ASCII lines of varying length ending in CR LF,
// as a PTY with ONLCR delivers them.
func plainText(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over a lazy dog func main return err nil if for range go test build ok PASS FAIL 0.012s")
	var b bytes.Buffer
	for b.Len() < n {
		width := rng.IntN(120)
		line := 0
		for line < width {
			w := words[rng.IntN(len(words))]
			b.WriteString(w)
			b.WriteByte(' ')
			line += len(w) + 1
		}
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

// colourText is n bytes of SGR-heavy output: ls --color listings and gcc
// diagnostics with their erase-in-line codes.
func colourText(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "\x1b[0m\x1b[01;34mdir%d\x1b[0m  \x1b[01;32mrun.sh\x1b[0m  main.go  \x1b[38;5;208mREADME.md\x1b[0m  \x1b[01;36mlink\x1b[0m\r\n", i)
		fmt.Fprintf(&b, "\x1b[01m\x1b[Kmain.c:%d:5:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[Kexpected \x1b[01m\x1b[K';'\x1b[m\x1b[K before \x1b[01m\x1b[K'}'\x1b[m\x1b[K token\r\n", i)
		fmt.Fprintf(&b, "   %d | \x1b[01;31m\x1b[K}\x1b[m\x1b[K\r\n      | \x1b[01;31m\x1b[K^\x1b[m\x1b[K\r\n", i)
	}
	return b.Bytes()
}

// utf8Text is n bytes of mixed-script lines: accents, CJK, emoji.
func utf8Text(n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString("café naïve résumé 日本語のテキスト 한국어 🙂🚀 ok — done\r\n")
	}
	return b.Bytes()
}

func benchmarkWrite(b *testing.B, data []byte) {
	term := New(24, 80, nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for p := data; len(p) > 0; {
			n := min(len(p), benchChunk)
			term.Write(p[:n])
			p = p[n:]
		}
	}
}

func BenchmarkWritePlain(b *testing.B) { benchmarkWrite(b, plainText(1<<20)) }

// BenchmarkWriteFlood is `yes` on a default-size PTY (50x200): one-byte
// lines, each row scrolled into the scrollback with its long blank tail.
func BenchmarkWriteFlood(b *testing.B) {
	data := bytes.Repeat([]byte("y\r\n"), 1<<20/3)
	term := New(50, 200, nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for p := data; len(p) > 0; {
			n := min(len(p), benchChunk)
			term.Write(p[:n])
			p = p[n:]
		}
	}
}
func BenchmarkWriteColour(b *testing.B) { benchmarkWrite(b, colourText(1<<20)) }
func BenchmarkWriteUTF8(b *testing.B)   { benchmarkWrite(b, utf8Text(1<<20)) }

// BenchmarkTranscript renders a full default scrollback (10000 lines)
// plus the screen.
func BenchmarkTranscript(b *testing.B) {
	term := New(24, 80, nil)
	term.Write(plainText(2 << 20))
	if n := term.scrollback.count(); n != DefaultScrollbackLines {
		b.Fatalf("scrollback holds %d lines, want %d", n, DefaultScrollbackLines)
	}
	b.SetBytes(int64(len(term.Transcript())))
	b.ReportAllocs()
	for b.Loop() {
		term.Transcript()
	}
}

// BenchmarkScreen renders the visible screen, what a poll of a
// full-screen program costs.
func BenchmarkScreen(b *testing.B) {
	term := New(50, 200, nil)
	term.Write(utf8Text(64 << 10))
	b.ReportAllocs()
	for b.Loop() {
		term.Screen()
	}
}
