package vt

import "unicode/utf8"

// dispatcher receives what the parser recognises. The slices passed to it
// alias the parser's buffers and are valid only during the call.
type dispatcher interface {
	// printASCII prints a run of bytes 0x20-0x7E, the hot path for plain
	// text: one call per run instead of one per byte.
	printASCII(run []byte)
	// print prints one decoded rune (never a C0 or C1 control).
	print(r rune)
	// execute runs a C0 control.
	execute(b byte)
	escDispatch(intermediates []byte, final byte)
	csiDispatch(params []int, intermediates []byte, final byte)
	// oscDispatch receives an OSC string, cut to MaxStringBytes.
	oscDispatch(data []byte)
	// dcsDispatch receives a DCS string with its header, cut to
	// MaxStringBytes, once the string has ended (the diagram's unhook).
	dcsDispatch(params []int, intermediates []byte, final byte, data []byte)
}

// parser is the Williams state machine plus a UTF-8 decoder for ground.
// It owns no screen state; a Terminal embeds one and is its dispatcher.
//
// Invariant: nparams <= MaxParams, ninter <= MaxIntermediates,
// len(str) <= MaxStringBytes, every params[i] <= MaxParamValue, and
// need > 0 only in stateGround.
type parser struct {
	state state

	// Sequence header, reset by the clear action.
	params       [MaxParams]int
	nparams      int  // parameters started, counting empty ones
	paramsFull   bool // a parameter beyond MaxParams was started; the rest are dropped
	inter        [MaxIntermediates]byte
	ninter       int
	interTooMany bool // more than MaxIntermediates: dispatch nothing
	dcsFinal     byte // final byte of the DCS header, from hook to unhook

	// str holds OSC or DCS data, reset by osc_start and hook. Its backing
	// array is kept between strings.
	str []byte

	// UTF-8 decoder state: need continuation bytes are still expected,
	// each in lo..hi (the first may be narrower, which rejects overlong
	// forms, surrogates and values above U+10FFFF); cp is the value so far.
	need   int
	lo, hi byte
	cp     rune
}

// reset returns p to ground with nothing pending.
func (p *parser) reset() {
	str := p.str[:0]
	*p = parser{str: str}
}

// parse feeds data through the state machine, calling d for everything
// recognised. A sequence may be split across calls at any byte.
func (p *parser) parse(d dispatcher, data []byte) {
	for i := 0; i < len(data); {
		b := data[i]
		if p.state == stateGround {
			if b >= 0x80 {
				p.decode(d, b)
				i++
				continue
			}
			if p.need > 0 {
				// A sequence cut short by an ASCII byte is one error; the
				// byte itself is then handled normally.
				p.need = 0
				d.print(utf8.RuneError)
			}
			if b >= 0x20 && b < 0x7f {
				j := i + 1
				for j < len(data) && data[j] >= 0x20 && data[j] < 0x7f {
					j++
				}
				d.printASCII(data[i:j])
				i = j
				continue
			}
		}
		p.step(d, b)
		i++
	}
}

// step runs the table for one byte.
func (p *parser) step(d dispatcher, b byte) {
	t := table[p.state][b]
	if !t.changes() {
		if t.action() == actionParam {
			p.param(b) // the bulk of every CSI, kept off the switch
			return
		}
		p.act(d, t.action(), b)
		return
	}
	next := t.next()
	if a := exitAction(p.state); a != actionNone && b != 0x18 && b != 0x1a {
		// CAN and SUB cancel a string rather than end it: its OSC or DCS
		// is dropped, not dispatched half-received.
		p.act(d, a, b)
	}
	p.act(d, t.action(), b)
	p.state = next
	if a := entryAction(next); a != actionNone {
		p.act(d, a, b)
	}
}

func (p *parser) act(d dispatcher, a action, b byte) {
	switch a {
	case actionNone, actionIgnore:
	case actionPrint:
		d.print(rune(b))
	case actionExecute:
		d.execute(b)
	case actionClear:
		p.nparams = 0
		p.paramsFull = false
		p.ninter = 0
		p.interTooMany = false
	case actionCollect:
		if p.ninter < MaxIntermediates {
			p.inter[p.ninter] = b
			p.ninter++
		} else {
			p.interTooMany = true
		}
	case actionParam:
		p.param(b)
	case actionEscDispatch:
		if !p.interTooMany {
			d.escDispatch(p.inter[:p.ninter], b)
		}
	case actionCSIDispatch:
		if !p.interTooMany {
			d.csiDispatch(p.params[:p.nparams], p.inter[:p.ninter], b)
		}
	case actionHook:
		p.dcsFinal = b
		p.str = p.str[:0]
	case actionPut, actionOSCPut:
		if len(p.str) < MaxStringBytes {
			p.str = append(p.str, b)
		}
	case actionUnhook:
		if !p.interTooMany {
			d.dcsDispatch(p.params[:p.nparams], p.inter[:p.ninter], p.dcsFinal, p.str)
		}
	case actionOSCStart:
		p.str = p.str[:0]
	case actionOSCEnd:
		d.oscDispatch(p.str)
	default:
		panic("vt: parser action " + a.String() + " outside the table")
	}
}

// param handles a digit or a ';'. An empty parameter counts (";5" is two
// parameters, the first 0); the dispatcher treats 0 as the default.
func (p *parser) param(b byte) {
	if p.nparams == 0 {
		p.nparams = 1
		p.params[0] = 0
	}
	if b == ';' {
		if p.nparams < MaxParams {
			p.params[p.nparams] = 0
			p.nparams++
		} else {
			p.paramsFull = true
		}
		return
	}
	if p.paramsFull {
		return
	}
	v := &p.params[p.nparams-1]
	*v = *v*10 + int(b-'0')
	if *v > MaxParamValue {
		*v = MaxParamValue
	}
}

// decode feeds one byte >= 0x80 in ground to the UTF-8 decoder. Malformed
// input becomes U+FFFD, one per maximal invalid subpart as the Unicode
// standard recommends, so resynchronising never swallows valid text.
// Decoded C1 controls (U+0080-U+009F) are dropped: the parser does not act
// on C1 controls at all (see table.go).
func (p *parser) decode(d dispatcher, b byte) {
	if p.need > 0 {
		if b >= p.lo && b <= p.hi {
			p.cp = p.cp<<6 | rune(b&0x3f)
			p.lo, p.hi = 0x80, 0xbf
			p.need--
			if p.need == 0 && p.cp >= 0xa0 {
				d.print(p.cp)
			}
			return
		}
		p.need = 0
		d.print(utf8.RuneError)
		// b may start a new sequence.
	}
	p.lo, p.hi = 0x80, 0xbf
	switch {
	case b >= 0xc2 && b <= 0xdf:
		p.need, p.cp = 1, rune(b&0x1f)
	case b == 0xe0:
		p.need, p.cp, p.lo = 2, 0, 0xa0
	case b >= 0xe1 && b <= 0xef:
		p.need, p.cp = 2, rune(b&0x0f)
		if b == 0xed {
			p.hi = 0x9f // no surrogates
		}
	case b == 0xf0:
		p.need, p.cp, p.lo = 3, 0, 0x90
	case b >= 0xf1 && b <= 0xf4:
		p.need, p.cp = 3, rune(b&0x07)
		if b == 0xf4 {
			p.hi = 0x8f // nothing above U+10FFFF
		}
	default: // a stray continuation byte, C0, C1 or F5-FF
		d.print(utf8.RuneError)
	}
}
