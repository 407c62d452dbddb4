package vt

// charset is a 94-character set designated into G0 or G1. Only the two that
// programs on a UTF-8 terminal still use are told apart: ASCII and the DEC
// Special Graphics set, which ncurses selects for box-drawing lines when
// the terminfo entry has acsc (ESC ( 0 ... ESC ( B). Every other
// designation (UK, NRCS, G2/G3, single shifts) reads as ASCII.
type charset uint8

const (
	charsetASCII charset = iota
	charsetDECSpecial
)

// charsets is the designation state saved by DECSC: G0, G1 and which of
// them is invoked into GL (SI selects G0, SO selects G1).
type charsets struct {
	g  [2]charset
	gl uint8
}

// active returns the set that printable ASCII bytes are drawn from.
func (c *charsets) active() charset { return c.g[c.gl&1] }

// designate handles ESC ( F and ESC ) F.
func (c *charsets) designate(slot int, final byte) {
	if final == '0' {
		c.g[slot] = charsetDECSpecial
	} else {
		c.g[slot] = charsetASCII
	}
}

// decSpecial maps 0x5F-0x7E of the DEC Special Graphics set to Unicode
// (the VT100 User Guide, table 3-9, as xterm maps it); 0x5F is a blank.
var decSpecial = [...]rune{
	' ',
	'◆', '▒', '␉', '␌', '␍', '␊', '°', '±', // 0x60-0x67
	'␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', // 0x68-0x6F
	'⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', // 0x70-0x77
	'│', '≤', '≥', 'π', '≠', '£', '·', // 0x78-0x7E
}

// translate maps an ASCII byte through the active set.
func (c *charsets) translate(b byte) rune {
	if c.active() == charsetDECSpecial && b >= 0x5f && b <= 0x7e {
		return decSpecial[b-0x5f]
	}
	return rune(b)
}
