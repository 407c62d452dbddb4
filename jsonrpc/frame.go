package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxFrameSize bounds one length-prefixed frame on the daemon wire.
const MaxFrameSize = 8 << 20

// DefaultMaxLineSize bounds one newline-delimited message on stdio when the
// caller gives no limit.
const DefaultMaxLineSize = 8 << 20

// FrameReader yields one encoded message at a time.
type FrameReader interface {
	// ReadFrame returns the next frame. io.EOF means a clean end of stream.
	// An error wrapping ErrFrameTooLarge is recoverable for framers that can
	// resynchronise (the newline framer) and final for those that cannot.
	ReadFrame() ([]byte, error)
}

// FrameWriter writes one encoded message; it is safe for concurrent use.
type FrameWriter interface {
	WriteFrame(frame []byte) error
}

// FrameTooLargeError reports the limit that a frame exceeded.
type FrameTooLargeError struct {
	Limit int
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("jsonrpc: frame too large (limit %d bytes)", e.Limit)
}
func (e *FrameTooLargeError) Unwrap() error { return ErrFrameTooLarge }

// LineReader reads newline-delimited frames (MCP stdio). Empty lines are
// skipped; a trailing "\r" is removed.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// lineBufferSize is the read buffer of a LineReader. Lines longer than it are
// assembled from several reads, up to the reader's limit.
const lineBufferSize = 64 << 10

// NewLineReader returns a reader whose frames are at most max bytes
// (DefaultMaxLineSize when max <= 0).
func NewLineReader(r io.Reader, max int) *LineReader {
	return newLineReaderSize(r, max, lineBufferSize)
}

// newLineReaderSize is NewLineReader with a chosen buffer size, so the fuzz
// target reaches the multi-read path with small inputs. bufio raises sizes
// below 16 to 16.
func newLineReaderSize(r io.Reader, max, size int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLineSize
	}
	return &LineReader{r: bufio.NewReaderSize(r, size), max: max}
}

// ReadFrame returns the next non-empty line without its terminator. A line
// over the limit is consumed to its end and reported as *FrameTooLargeError,
// after which reading can continue with the next line.
func (lr *LineReader) ReadFrame() ([]byte, error) {
	for {
		line, err := lr.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// readLine returns the next line without "\n" and one trailing "\r". The limit
// applies to that line, whether or not it ends in a newline; the bytes of an
// oversize line are dropped as they arrive, so at most max+2 are held.
func (lr *LineReader) readLine() ([]byte, error) {
	var line []byte
	tooLarge := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !tooLarge {
			if len(line)+len(chunk) > lr.max+2 { // room for "\r\n"
				tooLarge, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			// Ended by a newline.
		case errors.Is(err, io.EOF):
			if !tooLarge && len(line) == 0 {
				return nil, io.EOF
			}
			// The last line, without a newline; the next call sees io.EOF.
		default:
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if tooLarge || len(line) > lr.max {
			return nil, &FrameTooLargeError{Limit: lr.max}
		}
		return line, nil
	}
}

// LineWriter writes each frame followed by a newline. Frames must not contain
// newlines; encoding/json never produces one.
type LineWriter struct {
	mu sync.Mutex // serialises whole frames
	w  io.Writer
}

// NewLineWriter returns a LineWriter on w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// WriteFrame writes frame and a newline.
func (lw *LineWriter) WriteFrame(frame []byte) error {
	return lw.writeParts([][]byte{frame})
}

// writeParts writes the parts of one frame, in order, and a newline; the
// lock keeps a frame's parts together.
func (lw *LineWriter) writeParts(parts [][]byte) error {
	for _, p := range parts {
		if bytes.IndexByte(p, '\n') >= 0 {
			return errors.New("jsonrpc: frame contains a newline")
		}
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return writeGathered(lw.w, nil, parts, []byte("\n"))
}

// coalesceLimit is the size up to which a frame's parts are copied into one
// buffer and written in one call; a larger part is written as it is, since
// copying it would cost more than the extra write.
const coalesceLimit = 32 << 10

// gatherPool holds writeGathered's buffers. A buffer holds at most the
// small parts of a frame: a few coalesceLimit, since a frame has few parts.
var gatherPool = sync.Pool{New: func() any { return new([]byte) }}

// writeGathered writes head, the parts and tail to w in order. Runs of
// small pieces go out in one write; a part over coalesceLimit is written
// on its own without being copied.
func writeGathered(w io.Writer, head []byte, parts [][]byte, tail []byte) error {
	small := 0
	for _, p := range parts {
		if len(p) <= coalesceLimit {
			small += len(p)
		}
	}
	// The buffer is only written, never kept (io.Writer's contract), so it
	// goes back to the pool after the last write.
	bp := gatherPool.Get().(*[]byte)
	defer gatherPool.Put(bp)
	if need := len(head) + small + len(tail); cap(*bp) < need {
		*bp = make([]byte, 0, need)
	}
	buf := append((*bp)[:0], head...)
	defer func() { *bp = buf[:0] }()
	for _, p := range parts {
		if len(p) <= coalesceLimit {
			buf = append(buf, p...)
			continue
		}
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	buf = append(buf, tail...)
	if len(buf) == 0 {
		return nil
	}
	_, err := w.Write(buf)
	return err
}

// LengthReader reads frames with a 4-byte big-endian length prefix (the daemon
// wire). Frames over the limit are fatal: the stream cannot be trusted after
// a peer lied about sizes, so every later call returns the same error.
type LengthReader struct {
	r   io.Reader
	max int
	err error // sticky after a fatal framing error
}

// NewLengthReader returns a reader with frames of at most max bytes
// (MaxFrameSize when max <= 0 or above MaxFrameSize).
func NewLengthReader(r io.Reader, max int) *LengthReader {
	if max <= 0 || max > MaxFrameSize {
		max = MaxFrameSize
	}
	return &LengthReader{r: r, max: max}
}

// ReadFrame returns the next frame's payload.
func (lr *LengthReader) ReadFrame() ([]byte, error) {
	if lr.err != nil {
		return nil, lr.err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(lr.r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("jsonrpc: truncated frame header: %w", err)
		}
		lr.err = err
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(lr.max) {
		lr.err = &FrameTooLargeError{Limit: lr.max}
		return nil, lr.err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(lr.r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		lr.err = fmt.Errorf("jsonrpc: truncated frame: %w", err)
		return nil, lr.err
	}
	return buf, nil
}

// LengthWriter writes frames with a 4-byte big-endian length prefix.
type LengthWriter struct {
	mu  sync.Mutex // serialises whole frames
	w   io.Writer
	max int
}

// NewLengthWriter returns a writer refusing frames over max bytes
// (MaxFrameSize when max <= 0 or above MaxFrameSize).
func NewLengthWriter(w io.Writer, max int) *LengthWriter {
	if max <= 0 || max > MaxFrameSize {
		max = MaxFrameSize
	}
	return &LengthWriter{w: w, max: max}
}

// WriteFrame writes the prefix and payload.
func (lw *LengthWriter) WriteFrame(frame []byte) error {
	return lw.writeParts([][]byte{frame})
}

// writeParts writes the length prefix and the parts of one frame, in
// order; the lock keeps a frame's parts together.
func (lw *LengthWriter) writeParts(parts [][]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > lw.max {
		return &FrameTooLargeError{Limit: lw.max}
	}
	var prefix [4]byte
	binary.BigEndian.PutUint32(prefix[:], uint32(n))
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return writeGathered(lw.w, prefix[:], parts, nil)
}

// partsWriter is a framer that writes a frame given in parts (see
// EncodeMessageParts) without joining them first.
type partsWriter interface {
	writeParts(parts [][]byte) error
}
