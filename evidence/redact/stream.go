package redact

import "strings"

// Text that reaches the redactor a line at a time (a command's output as it
// is printed) needs two things String alone cannot give: a private key block
// spans many lines, so the lines inside it must be known to be inside it;
// and the last line of a running command is still being written, so its
// end may be the start of a secret whose rest has not arrived. Lines keeps
// the first state; Stable decides the second.

// leads are literal starts of the secrets the rules find; a line whose end
// could begin one of them, or that holds one with nothing after it to end
// the token, is not shown until it completes.
var leads = buildLeads()

func buildLeads() []string {
	var out []string
	for _, r := range rules {
		for _, m := range r.matchers {
			switch m := m.(type) {
			case tokenMatcher:
				if len(m.next) == 0 {
					out = append(out, m.lead)
				}
				for _, n := range m.next {
					out = append(out, m.lead+n)
				}
			case bearerMatcher:
				out = append(out, m.lead+" ")
			case awsSecretMatcher:
				out = append(out, m.lead)
			case jwtMatcher:
				out = append(out, "eyJ")
			case pemMatcher:
				out = append(out, "-----BEGIN ")
			case urlMatcher:
				out = append(out, "://")
			}
		}
	}
	return out
}

// minHeldPrefix is the shortest end of a line held as a possible lead: a
// single byte reveals nothing of a secret, and holding one would hide the
// last letter of most progress lines.
const minHeldPrefix = 2

// Stable redacts partial, the incomplete last line of output still being
// written, for showing now: emit is the redacted text that is safe to show,
// and held is how many bytes at the end of partial were left out because
// they could be the start of a secret whose rest has not arrived (a prefix
// of a lead such as "ghp_" or "-----BEGIN ", a lead followed only by token
// bytes, a "user:pass@" URL, an aws_secret_access_key assignment). Show the
// held bytes only once the line is complete or its command has ended, and
// then through String. A Redactor made by New(true) holds nothing.
func (r *Redactor) Stable(partial string) (emit string, held int) {
	if r != nil && r.disabled {
		return partial, 0
	}
	cut := holdFrom(partial)
	emit, _ = r.String(partial[:cut])
	return emit, len(partial) - cut
}

// holdFrom returns where the possibly unfinished secret at the end of s
// begins, len(s) if there is none.
func holdFrom(s string) int {
	hold := len(s)
	for _, lead := range leads {
		// The end of s could be the lead's start.
		for k := min(len(lead)-1, len(s)); k >= minHeldPrefix; k-- {
			if strings.HasSuffix(s, lead[:k]) {
				hold = min(hold, len(s)-k)
				break
			}
		}
		i := strings.LastIndex(s, lead)
		if i < 0 {
			continue
		}
		rest := s[i+len(lead):]
		if lead == "ecret" || lead == "ECRET" {
			// name = value: the name's word chars, the assignment, then a
			// value running to the end.
			rest = strings.TrimLeft(rest, "_- ACCESKYacesky")
			rest = strings.TrimLeft(rest, " \t=:\"'")
		}
		if strings.IndexAny(rest, " \t\r\n") < 0 {
			hold = min(hold, runStart(s, i))
		}
	}
	return hold
}

// runStart is where the run of non-blank bytes holding s[i] begins.
func runStart(s string, i int) int {
	return strings.LastIndexAny(s[:i], " \t\r\n") + 1
}

// Lines redacts text that arrives a line at a time, one after the other,
// remembering across lines whether they are inside a private key block. It
// is not safe for concurrent use.
type Lines struct {
	r *Redactor
	// end is the END line that closes the private key block the last line
	// opened, "" outside a block.
	end string
}

// Lines returns a line redactor with the rules of r (nil: every rule).
func (r *Redactor) Lines() *Lines { return &Lines{r: r} }

// Line redacts one complete line (without its "\n") and returns it with the
// number of secrets replaced. A line inside a private key block becomes the
// block's placeholder whole, up to and including the END line.
func (l *Lines) Line(s string) (string, int) {
	if l.r != nil && l.r.disabled {
		return s, 0
	}
	prefix, n := "", 0
	if l.end != "" {
		k := strings.Index(s, l.end)
		if k < 0 {
			return placeholder(rules[0].Name), 1
		}
		prefix, n = placeholder(rules[0].Name), 1
		s = s[k+len(l.end):]
		l.end = ""
	}
	out, m := l.r.String(s)
	l.end = openKeyEnd(s)
	return prefix + out, n + m
}

// Partial is Stable for the incomplete line that would follow the lines
// given so far: inside a private key block all of it is held.
func (l *Lines) Partial(s string) (emit string, held int) {
	if l.end != "" && !(l.r != nil && l.r.disabled) {
		return "", len(s)
	}
	return l.r.Stable(s)
}

// openKeyEnd returns the END line of a private key block that s opens and
// does not close, "" if it opens none.
func openKeyEnd(s string) string {
	const begin, dashes = "-----BEGIN ", "-----"
	end := ""
	pemMatcher{}.find(s, func(start, stop int) {
		if stop != len(s) {
			return
		}
		label := s[start+len(begin):]
		label = label[:strings.Index(label, dashes)]
		endLine := "-----END " + label + dashes
		if !strings.HasSuffix(s, endLine) {
			end = endLine
		}
	})
	return end
}
