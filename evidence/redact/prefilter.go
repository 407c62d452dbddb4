package redact

import "strings"

// The prefilter. Each matcher starts its every candidate at an occurrence of
// a lead literal, so in a text where none of its literals occurs it finds
// nothing. Most texts (source files, logs) hold no literal of most rules, and
// running every matcher would cost one strings.Index pass per lead, about
// twenty over the whole text, several of them slow (leads starting with a
// common letter send strings.Index through many false starts). One pass over
// the text instead notes which literals occur, and find runs only the
// matchers with one that does. The result is the same by construction: a
// skipped matcher would have found nothing (TestPrefilterNeverSkipsASecret
// and FuzzRedact compare with the unfiltered search).

// maxMatchers bounds the flattened matcher list: a present set is a uint64.
const maxMatchers = 64

// flatMatcher is one matcher of the rule set with the index of its rule.
type flatMatcher struct {
	rule int
	m    matcher
}

// prefilter holds the rule set's matchers and the literals that announce
// them. Built once from rules; never modified.
type prefilter struct {
	matchers []flatMatcher
	all      uint64 // one bit per matcher
	// pairs marks the first two and the second two bytes of every
	// literal; byFirst lists the literals that start with a byte.
	pairs   [1 << 16 / 64]uint64
	byFirst [256][]literal
}

// literal is one text whose occurrence lets a matcher run.
type literal struct {
	text string
	bit  uint64 // the matcher's bit
}

var filter = newPrefilter(rules)

func newPrefilter(rs []Rule) *prefilter {
	p := &prefilter{}
	for i, r := range rs {
		for _, m := range r.matchers {
			bit := uint64(1) << len(p.matchers)
			p.matchers = append(p.matchers, flatMatcher{rule: i, m: m})
			if len(p.matchers) > maxMatchers {
				panic("redact: more than 64 matchers")
			}
			p.all |= bit
			for _, l := range m.literals() {
				if len(l) < 3 {
					panic("redact: a literal shorter than three bytes: " + l)
				}
				for _, pair := range []uint16{uint16(l[0])<<8 | uint16(l[1]), uint16(l[1])<<8 | uint16(l[2])} {
					p.pairs[pair/64] |= 1 << (pair % 64)
				}
				p.byFirst[l[0]] = append(p.byFirst[l[0]], literal{text: l, bit: bit})
			}
		}
	}
	return p
}

// present returns the set of matchers at least one of whose literals occurs
// in s, in one pass that stops once every matcher is in.
//
// The pass looks at every other byte: a literal (three bytes or more)
// starting at j has its first two bytes at j or its second and third at
// j+1, and one of j, j+1 is odd. So at each odd k where the pair s[k:k+2]
// is marked, the literals starting at k and at k-1 are checked.
//
// Ordinary text marks a pair at a few percent of the places looked at. A
// text that marks many more (a run of "sk-sk-sk-...") would make the pass
// cost more than it saves: past maxHits every matcher runs, as without the
// prefilter, which is always correct.
func (p *prefilter) present(s string) uint64 {
	var found uint64
	hits, maxHits := 0, 64+len(s)/8
	for k := 1; k+1 < len(s); k += 2 {
		pair := uint16(s[k])<<8 | uint16(s[k+1])
		if p.pairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		if hits++; hits > maxHits {
			return p.all
		}
		found = p.startingAt(s, k-1, p.startingAt(s, k, found))
		if found == p.all {
			break
		}
	}
	return found
}

// startingAt adds to found the matchers of the literals that start at s[i].
func (p *prefilter) startingAt(s string, i int, found uint64) uint64 {
	for _, l := range p.byFirst[s[i]] {
		if found&l.bit == 0 && strings.HasPrefix(s[i:], l.text) {
			found |= l.bit
		}
	}
	return found
}

// literals of each matcher: every secret it finds is found from an
// occurrence of one of them (its lead, with a continuation when it needs
// one).
func (m tokenMatcher) literals() []string {
	if len(m.next) == 0 {
		return []string{m.lead}
	}
	out := make([]string, 0, len(m.next))
	for _, n := range m.next {
		out = append(out, m.lead+n)
	}
	return out
}

func (m segmentedMatcher) literals() []string { return []string{m.lead} }
func (jwtMatcher) literals() []string         { return []string{"eyJ"} }
func (pemMatcher) literals() []string         { return []string{"-----BEGIN "} }
func (urlMatcher) literals() []string         { return []string{"://"} }
func (m bearerMatcher) literals() []string    { return []string{m.lead} }
func (m awsSecretMatcher) literals() []string { return []string{m.lead} }
