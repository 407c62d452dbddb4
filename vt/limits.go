package vt

// The limits below bound every structure that grows with untrusted input, so
// a Terminal's memory is a function of its size and options, never of the
// bytes a command prints.

// Screen size limits. New and Resize clamp to them: a 1000x2000 grid (32 MB
// of 16-byte cells, twice that with the alternate screen) is already far
// beyond any real window, and the clamp keeps a bogus size request from
// allocating gigabytes.
const (
	MaxRows = 1000
	MaxCols = 2000
)

// Scrollback limits. Options.ScrollbackLines is clamped to
// MaxScrollbackLines. The text held is at most lines*(cols*MaxCellBytes+1)
// bytes, reached only by lines full of runes with combining marks, and up
// to twice that while dropped lines wait for compaction; at the defaults
// and 200 columns that is under 50 MB, for ordinary text about 1 MB.
const (
	DefaultScrollbackLines = 10000
	MaxScrollbackLines     = 100000
)

// MaxLineBytes bounds one logical line (rows joined across autowraps) kept
// in the scrollback: a longer line is cut there and goes on as the next
// line, and DrainLines says so, so a line with no newline cannot grow
// without bound.
const MaxLineBytes = 1 << 20

// Parser limits (vt100.net/emu/dec_ansi_parser suggests 16 parameters and 2
// intermediates; xterm accepts 30 parameters, so 32 leaves room).
const (
	// MaxParams is the number of CSI and DCS parameters kept; further ones
	// are ignored and the sequence is still dispatched with the first
	// MaxParams.
	MaxParams = 32
	// MaxParamValue clamps each parameter: larger numbers mean nothing to a
	// 2000-column screen, and the clamp keeps the accumulator from
	// overflowing.
	MaxParamValue = 65535
	// MaxIntermediates bounds the collected private marker and intermediate
	// bytes; a sequence with more is consumed but not dispatched, as the
	// Williams parser does.
	MaxIntermediates = 4
	// MaxStringBytes bounds the data kept of one OSC or DCS string. Bytes
	// beyond it are dropped as they arrive, never buffered; SOS, PM and APC
	// strings are consumed without keeping anything.
	MaxStringBytes = 4096
)

// Cell limits.
const (
	// MaxCombiningMarks is how many zero-width runes (combining marks,
	// joiners, variation selectors) one cell keeps after its base rune;
	// further ones are dropped. Two cover decomposed Latin and Vietnamese,
	// Thai and emoji joiners; a cell stays 16 bytes.
	MaxCombiningMarks = 2
	// MaxCellBytes is the most UTF-8 one rendered cell can take: the base
	// rune and its marks, 4 bytes each.
	MaxCellBytes = 4 * (1 + MaxCombiningMarks)
)
