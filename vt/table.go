package vt

// The state table of Paul Williams' DEC/ANSI parser
// (https://vt100.net/emu/dec_ansi_parser), written out from the diagram.
// Every byte in every state maps to one action and, for transitions, the
// next state; the parser runs the exit action of the old state, the
// transition action and the entry action of the new state, in that order.
//
// Deviations from the diagram, all deliberate (doc.go lists them too):
//   - Bytes 0x80-0x9F are not C1 controls. The input is UTF-8, so those
//     bytes are continuation bytes; in ground they go to the UTF-8 decoder
//     before the table is consulted, in OSC and DCS strings they are string
//     data, elsewhere they are ignored. Bytes 0xA0-0xFF are handled the same
//     way rather than as GL aliases.
//   - BEL ends an OSC string (the xterm convention bash prompts rely on); the
//     diagram ignores it.
//   - DEL in ground is ignored rather than printed, as xterm does.
//   - CAN and SUB skip the exit action of osc_string and dcs_passthrough
//     (parser.step): a cancelled string is dropped, as in xterm, instead
//     of being dispatched by osc_end or unhook.

// state is one of the fourteen parser states.
type state uint8

const (
	stateGround state = iota
	stateEscape
	stateEscapeIntermediate
	stateCSIEntry
	stateCSIParam
	stateCSIIntermediate
	stateCSIIgnore
	stateDCSEntry
	stateDCSParam
	stateDCSIntermediate
	stateDCSPassthrough
	stateDCSIgnore
	stateOSCString
	stateSOSPMAPCString
	numStates
)

var stateNames = [numStates]string{
	"ground", "escape", "escape_intermediate",
	"csi_entry", "csi_param", "csi_intermediate", "csi_ignore",
	"dcs_entry", "dcs_param", "dcs_intermediate", "dcs_passthrough", "dcs_ignore",
	"osc_string", "sos_pm_apc_string",
}

func (s state) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return "state(?)"
}

// action is one of the parser actions of the diagram. Entry and exit
// actions (clear, hook, unhook, osc_start, osc_end) are run by the parser
// on state changes, not stored in the table.
type action uint8

const (
	actionNone action = iota
	actionPrint
	actionExecute
	actionClear
	actionCollect
	actionParam
	actionEscDispatch
	actionCSIDispatch
	actionHook
	actionPut
	actionUnhook
	actionOSCStart
	actionOSCPut
	actionOSCEnd
	actionIgnore
	numActions
)

var actionNames = [numActions]string{
	"none", "print", "execute", "clear", "collect", "param", "esc_dispatch",
	"csi_dispatch", "hook", "put", "unhook", "osc_start", "osc_put", "osc_end", "ignore",
}

func (a action) String() string {
	if a < numActions {
		return actionNames[a]
	}
	return "action(?)"
}

// transition packs one table cell: the action in bits 0-3, the next state
// in bits 4-7 and, in bit 8, whether the byte changes state at all (a
// transition to the same state still runs exit and entry actions, as ESC in
// escape does).
type transition uint16

const transitionFlag transition = 1 << 8

func (t transition) action() action { return action(t & 0x0f) }
func (t transition) next() state    { return state(t>>4) & 0x0f }
func (t transition) changes() bool  { return t&transitionFlag != 0 }

// entryAction and exitAction are the actions the diagram attaches to
// states rather than to events.
func entryAction(s state) action {
	switch s {
	case stateEscape, stateCSIEntry, stateDCSEntry:
		return actionClear
	case stateDCSPassthrough:
		return actionHook
	case stateOSCString:
		return actionOSCStart
	}
	return actionNone
}

func exitAction(s state) action {
	switch s {
	case stateDCSPassthrough:
		return actionUnhook
	case stateOSCString:
		return actionOSCEnd
	}
	return actionNone
}

// transitionTable is indexed by state, then by input byte.
type transitionTable [numStates][256]transition

// table is built once when the package is initialised and only read after
// that; it is shared by every parser.
var table = newTransitionTable()

func newTransitionTable() *transitionTable {
	var t transitionTable

	// stay records an event that runs an action without leaving s.
	stay := func(s state, lo, hi byte, a action) {
		for b := int(lo); b <= int(hi); b++ {
			t[s][b] = transition(a)
		}
	}
	// move records an event that runs a and moves from s to next.
	move := func(s state, lo, hi byte, a action, next state) {
		for b := int(lo); b <= int(hi); b++ {
			t[s][b] = transition(a) | transition(next)<<4 | transitionFlag
		}
	}
	// c0 is the C0 set without the "anywhere" bytes CAN, SUB and ESC.
	c0 := func(s state, a action) {
		stay(s, 0x00, 0x17, a)
		stay(s, 0x19, 0x19, a)
		stay(s, 0x1c, 0x1f, a)
	}

	// ground
	c0(stateGround, actionExecute)
	stay(stateGround, 0x20, 0x7e, actionPrint)
	stay(stateGround, 0x7f, 0x7f, actionIgnore)

	// escape
	c0(stateEscape, actionExecute)
	stay(stateEscape, 0x7f, 0x7f, actionIgnore)
	move(stateEscape, 0x20, 0x2f, actionCollect, stateEscapeIntermediate)
	move(stateEscape, 0x30, 0x7e, actionEscDispatch, stateGround)
	move(stateEscape, 0x50, 0x50, actionNone, stateDCSEntry)
	move(stateEscape, 0x58, 0x58, actionNone, stateSOSPMAPCString)
	move(stateEscape, 0x5b, 0x5b, actionNone, stateCSIEntry)
	move(stateEscape, 0x5d, 0x5d, actionNone, stateOSCString)
	move(stateEscape, 0x5e, 0x5f, actionNone, stateSOSPMAPCString)

	// escape_intermediate
	c0(stateEscapeIntermediate, actionExecute)
	stay(stateEscapeIntermediate, 0x20, 0x2f, actionCollect)
	stay(stateEscapeIntermediate, 0x7f, 0x7f, actionIgnore)
	move(stateEscapeIntermediate, 0x30, 0x7e, actionEscDispatch, stateGround)

	// csi_entry
	c0(stateCSIEntry, actionExecute)
	stay(stateCSIEntry, 0x7f, 0x7f, actionIgnore)
	move(stateCSIEntry, 0x20, 0x2f, actionCollect, stateCSIIntermediate)
	move(stateCSIEntry, 0x30, 0x39, actionParam, stateCSIParam)
	move(stateCSIEntry, 0x3a, 0x3a, actionNone, stateCSIIgnore)
	move(stateCSIEntry, 0x3b, 0x3b, actionParam, stateCSIParam)
	move(stateCSIEntry, 0x3c, 0x3f, actionCollect, stateCSIParam)
	move(stateCSIEntry, 0x40, 0x7e, actionCSIDispatch, stateGround)

	// csi_param
	c0(stateCSIParam, actionExecute)
	stay(stateCSIParam, 0x30, 0x39, actionParam)
	stay(stateCSIParam, 0x3b, 0x3b, actionParam)
	stay(stateCSIParam, 0x7f, 0x7f, actionIgnore)
	move(stateCSIParam, 0x3a, 0x3a, actionNone, stateCSIIgnore)
	move(stateCSIParam, 0x3c, 0x3f, actionNone, stateCSIIgnore)
	move(stateCSIParam, 0x20, 0x2f, actionCollect, stateCSIIntermediate)
	move(stateCSIParam, 0x40, 0x7e, actionCSIDispatch, stateGround)

	// csi_intermediate
	c0(stateCSIIntermediate, actionExecute)
	stay(stateCSIIntermediate, 0x20, 0x2f, actionCollect)
	stay(stateCSIIntermediate, 0x7f, 0x7f, actionIgnore)
	move(stateCSIIntermediate, 0x30, 0x3f, actionNone, stateCSIIgnore)
	move(stateCSIIntermediate, 0x40, 0x7e, actionCSIDispatch, stateGround)

	// csi_ignore
	c0(stateCSIIgnore, actionExecute)
	stay(stateCSIIgnore, 0x20, 0x3f, actionIgnore)
	stay(stateCSIIgnore, 0x7f, 0x7f, actionIgnore)
	move(stateCSIIgnore, 0x40, 0x7e, actionNone, stateGround)

	// dcs_entry
	c0(stateDCSEntry, actionIgnore)
	stay(stateDCSEntry, 0x7f, 0x7f, actionIgnore)
	move(stateDCSEntry, 0x20, 0x2f, actionCollect, stateDCSIntermediate)
	move(stateDCSEntry, 0x30, 0x39, actionParam, stateDCSParam)
	move(stateDCSEntry, 0x3a, 0x3a, actionNone, stateDCSIgnore)
	move(stateDCSEntry, 0x3b, 0x3b, actionParam, stateDCSParam)
	move(stateDCSEntry, 0x3c, 0x3f, actionCollect, stateDCSParam)
	move(stateDCSEntry, 0x40, 0x7e, actionNone, stateDCSPassthrough)

	// dcs_param
	c0(stateDCSParam, actionIgnore)
	stay(stateDCSParam, 0x30, 0x39, actionParam)
	stay(stateDCSParam, 0x3b, 0x3b, actionParam)
	stay(stateDCSParam, 0x7f, 0x7f, actionIgnore)
	move(stateDCSParam, 0x3a, 0x3a, actionNone, stateDCSIgnore)
	move(stateDCSParam, 0x3c, 0x3f, actionNone, stateDCSIgnore)
	move(stateDCSParam, 0x20, 0x2f, actionCollect, stateDCSIntermediate)
	move(stateDCSParam, 0x40, 0x7e, actionNone, stateDCSPassthrough)

	// dcs_intermediate
	c0(stateDCSIntermediate, actionIgnore)
	stay(stateDCSIntermediate, 0x20, 0x2f, actionCollect)
	stay(stateDCSIntermediate, 0x7f, 0x7f, actionIgnore)
	move(stateDCSIntermediate, 0x30, 0x3f, actionNone, stateDCSIgnore)
	move(stateDCSIntermediate, 0x40, 0x7e, actionNone, stateDCSPassthrough)

	// dcs_passthrough: the string itself; ESC (below) ends it.
	c0(stateDCSPassthrough, actionPut)
	stay(stateDCSPassthrough, 0x20, 0x7e, actionPut)
	stay(stateDCSPassthrough, 0x7f, 0x7f, actionIgnore)
	stay(stateDCSPassthrough, 0x80, 0xff, actionPut)

	// dcs_ignore
	c0(stateDCSIgnore, actionIgnore)
	stay(stateDCSIgnore, 0x20, 0x7f, actionIgnore)

	// osc_string
	c0(stateOSCString, actionIgnore)
	stay(stateOSCString, 0x20, 0x7f, actionOSCPut)
	stay(stateOSCString, 0x80, 0xff, actionOSCPut)
	move(stateOSCString, 0x07, 0x07, actionNone, stateGround)

	// sos_pm_apc_string
	c0(stateSOSPMAPCString, actionIgnore)
	stay(stateSOSPMAPCString, 0x20, 0x7f, actionIgnore)

	// Bytes 0x80-0xFF not set above are ignored (the zero transition is
	// actionNone, which does nothing either; ignore says so).
	for s := range numStates {
		for b := 0x80; b <= 0xff; b++ {
			if t[s][b] == 0 {
				t[s][b] = transition(actionIgnore)
			}
		}
	}

	// "anywhere": CAN and SUB abort any sequence, ESC starts a new one,
	// whatever the state.
	for s := range numStates {
		move(s, 0x18, 0x18, actionExecute, stateGround)
		move(s, 0x1a, 0x1a, actionExecute, stateGround)
		move(s, 0x1b, 0x1b, actionNone, stateEscape)
	}
	return &t
}
