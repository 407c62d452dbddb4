// Package vt owns turning the bytes a program writes to a terminal into
// text: a DEC/ANSI parser, a screen with scroll regions, an alternate
// screen and scrollback, and rendering of the visible and scrolled-out
// lines; it does not own the PTY, colours, input or anything that answers
// the program.
//
// Its one client is a shell session: every byte a command prints goes to
// Terminal.Write, and the model is shown Transcript (what scrolled by and
// what is on the main screen) or Screen (what a full-screen program shows
// now).
//
// # Specifications
//
// The parser is Paul Williams' state machine for DEC/ANSI input
// (https://vt100.net/emu/dec_ansi_parser), written out in table.go. Screen
// behaviour follows the VT100 and VT510 manuals (https://vt100.net/docs/)
// and, where those leave room or xterm extends them, xterm's ctlseqs
// (https://invisible-island.net/xterm/ctlseqs/ctlseqs.html). Widths follow
// Unicode East Asian Width (UAX #11).
//
// # Deviations from a real xterm
//
// Each is deliberate: the goal is text a model can read, from a bash that
// speaks UTF-8, with bounded memory and no replies.
//
//   - No attributes: SGR is parsed and dropped; cells hold runes only.
//   - No replies: DA, DSR, DECRQM, window reports, OSC colour queries and
//     DCS requests are consumed and never answered (a Terminal has no
//     output side).
//   - UTF-8 first, no 8-bit C1 controls: bytes 0x80-0x9F are UTF-8
//     continuation bytes, never CSI, OSC, ST and so on. In ground they go
//     to the UTF-8 decoder (a stray one prints U+FFFD); inside OSC and DCS
//     strings they are string data, so UTF-8 titles survive; inside escape
//     and CSI sequences they are ignored. Decoded C1 code points
//     (U+0080-U+009F) are dropped.
//   - BEL ends an OSC string, as in xterm (the Williams table ignores it).
//     ST is ESC \; a lone 0x9C is UTF-8 data.
//   - DEL (0x7F) is ignored in ground, as in xterm (the table prints it).
//   - CAN and SUB cancel an OSC or DCS string: it is dropped, as in xterm,
//     rather than dispatched by the table's exit action.
//   - Colon sub-parameters (CSI 38:2:... m) send the sequence to
//     csi_ignore, as the table says; only SGR uses them and SGR is dropped.
//   - Strings are bounded: OSC and DCS data beyond MaxStringBytes is
//     dropped as it arrives (a longer title is cut); SOS, PM and APC
//     strings keep nothing.
//   - Character sets: G0 and G1 with SI and SO, and only ASCII and DEC
//     Special Graphics (box drawing, mapped to Unicode). Other sets, G2,
//     G3 and single shifts read as ASCII.
//   - Widths: East Asian Wide and Fullwidth runes take two cells,
//     Ambiguous ones one; nonspacing and enclosing marks and format
//     characters (ZWJ, variation selectors) take none and join the cell
//     before the cursor, at most MaxCombiningMarks per cell. An emoji that
//     a variation selector asks to show wide stays one cell. A wide rune
//     on a one-column screen is drawn as U+FFFD.
//   - Scrollback gets the lines that leave the top of the main screen
//     while the scroll region is the whole screen (LF, IND, NEL, SU and a
//     wrap at the bottom). ED 2 does not save the screen first; ED 3 clears
//     the scrollback. Lines removed by DL or scrolled out of a partial
//     region are gone, as in xterm.
//   - The alternate screen (47, 1047, 1049) is drawn on but never enters
//     the scrollback or the transcript. 47 keeps its content between uses,
//     1047 clears it when left, 1049 saves the cursor and clears it when
//     entered. DECSC slots are per screen.
//   - Resize does not reflow. Narrower: columns beyond the new width are
//     cut (a wide rune cut in half is blanked). Fewer rows: blank rows
//     below the cursor go first, then rows leave the top, into the
//     scrollback for the main screen, so the transcript keeps them.
//     Wider or more rows: blank cells and rows are added at the right and
//     bottom; nothing is pulled back from the scrollback. The scroll
//     region resets to the whole screen, tab stops keep their places and
//     new columns get the default stops, the cursor is clamped.
//   - RIS (ESC c) resets modes, screens, tab stops and character sets but
//     keeps the scrollback and the title, so history survives `reset`;
//     Terminal.Reset clears everything.
//   - DECSTR turns autowrap on (a VT510 turns it off). DECCOLM (mode 3),
//     reverse video, left and right margins (DECLRMM) and DECSCA are not
//     supported; CSI s is always SCOSC.
//   - REP repeats at most rows*cols times.
//   - CAN and SUB abort a sequence and draw nothing (the VT100 drew a
//     checkerboard for SUB).
//   - Bracketed paste (2004) and synchronized output (2026) are tracked
//     but change nothing: the screen is read whenever the owner asks.
package vt
