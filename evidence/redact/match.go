package redact

import "strings"

// A matcher finds one shape of secret. find calls emit with the bounds of
// each secret in s, in increasing order of start.
//
// Invariant: find runs in time linear in len(s). Every matcher looks for its
// lead literal with strings.Index and examines a bounded neighbourhood or a
// run of bytes that no later candidate examines again (each find documents
// why).
//
// literals lists texts one of which occurs in s wherever find emits
// anything: the prefilter skips a matcher none of whose literals occurs.
type matcher interface {
	find(s string, emit func(start, end int))
	literals() []string
}

// Limits on how far a matcher looks around its lead literal.
const (
	// maxPEMLabel bounds the label of a BEGIN line ("OPENSSH PRIVATE KEY").
	maxPEMLabel = 64
	// maxAssignment bounds the bytes between a secret's name and its value
	// (`" : "`, ` = '`, ` [None]: `).
	maxAssignment = 64
	// maxAWSNameAndAssignment bounds a name such as "ecret_access_key"
	// (after the lead's 's') and what follows it up to the value.
	maxAWSNameAndAssignment = len("ecret_access_key") + maxAssignment
	// maxPlaceholder bounds the length of a placeholder, which is at most
	// len("[REDACTED:]") plus the longest rule name.
	maxPlaceholder = 64
)

// atWordStart reports whether a token starting at s[i] is not glued to a
// preceding letter or digit: "task-..." holds no "sk-..." key. A placeholder
// counts as a word: it may stand for a secret that ended in a letter, and the
// answer must not change when the text is redacted again.
func atWordStart(s string, i int) bool {
	return i == 0 || (!isAlnum(s[i-1]) && !placeholderEndsAt(s, i))
}

// atWordEnd reports whether a token ending before s[i] is not glued to a
// following letter, digit or placeholder (see atWordStart).
func atWordEnd(s string, i int) bool {
	return i == len(s) || (!isAlnum(s[i]) && !placeholderStartsAt(s, i))
}

// placeholderStartsAt reports whether a placeholder starts at s[i].
func placeholderStartsAt(s string, i int) bool {
	if !strings.HasPrefix(s[i:], placeholderPrefix) {
		return false
	}
	window := s[i:min(len(s), i+maxPlaceholder)]
	j := strings.Index(window, placeholderSuffix)
	return j >= 0 && isPlaceholder(window[:j+len(placeholderSuffix)])
}

// placeholderEndsAt reports whether a placeholder ends just before s[i].
func placeholderEndsAt(s string, i int) bool {
	if !strings.HasSuffix(s[:i], placeholderSuffix) {
		return false
	}
	window := s[max(0, i-maxPlaceholder):i]
	j := strings.LastIndex(window, placeholderPrefix)
	return j >= 0 && isPlaceholder(window[j:])
}

// tokenMatcher finds tokens made of a lead literal, optionally one of several
// continuations, and a body of min to max bytes of one class
// (max 0: no upper bound).
//
// A token starts at a word boundary unless its lead is distinctive enough
// to be a secret anywhere (glued). An unbounded body extends over the whole
// run of its class; a bounded one must be followed by a byte that is not a
// letter or digit, so that "AKIA" plus 16 characters inside a longer run is
// not a key.
type tokenMatcher struct {
	lead      string
	next      []string
	body      func(byte) bool
	min, max  int
	glued     bool // the token may follow a letter or digit ("xghp_...", two tokens back to back)
	needDigit bool // the body must hold a digit: keeps prose off generic shapes
}

// find is linear. A candidate with a bounded body costs at most max bytes,
// and the search resumes at the next byte. An unbounded body is scanned to
// the end of its run, and the search resumes where a lead could still reach
// past that end, accepted or not: a token whose lead lies inside the run has a
// body that is a suffix of this one, so it is no longer, holds no more digits
// and ends at the same byte. (No lead can start inside another's lead plus
// continuation: none of them overlaps itself.)
func (m tokenMatcher) find(s string, emit func(start, end int)) {
	for i := 0; ; {
		j := strings.Index(s[i:], m.lead)
		if j < 0 {
			return
		}
		start := i + j
		i = start + 1
		if !m.glued && !atWordStart(s, start) {
			continue
		}
		p, ok := start+len(m.lead), len(m.next) == 0
		for _, n := range m.next {
			if strings.HasPrefix(s[p:], n) {
				p, ok = p+len(n), true
				break
			}
		}
		if !ok {
			continue
		}
		bodyStart, limit := p, len(s)
		if m.max > 0 {
			limit = min(limit, p+m.max)
		}
		for p < limit && m.body(s[p]) {
			p++
		}
		if m.max == 0 {
			i = max(i, p-(bodyStart-start)+1)
		}
		if p-bodyStart < m.min || (m.max > 0 && !atWordEnd(s, p)) {
			continue
		}
		if m.needDigit && strings.IndexFunc(s[bodyStart:p], isDigitRune) < 0 {
			continue
		}
		emit(start, p)
	}
}

// segmentedMatcher finds tokens made of a lead literal at a word boundary
// and segments of exact sizes of one class, separated by dots (SendGrid's
// "SG.<22>.<43>"). The last segment must not run on: a letter, a digit, a
// byte of the class or a placeholder after it means a longer token, not
// this one.
type segmentedMatcher struct {
	lead  string
	sizes []int
	body  func(byte) bool
}

// find is linear: a candidate costs at most its lead, its segments and its
// dots, a bounded length, and the search resumes at the next byte.
func (m segmentedMatcher) find(s string, emit func(start, end int)) {
	for start := wordLead(s, m.lead, 0); start >= 0; start = wordLead(s, m.lead, start+1) {
		if end, ok := m.segments(s, start+len(m.lead)); ok {
			emit(start, end)
		}
	}
}

// segments returns the end of the segments that start at s[p].
func (m segmentedMatcher) segments(s string, p int) (int, bool) {
	for k, size := range m.sizes {
		if k > 0 {
			if p >= len(s) || s[p] != '.' {
				return 0, false
			}
			p++
		}
		end := p + size
		for p < min(end, len(s)) && m.body(s[p]) {
			p++
		}
		if p != end {
			return 0, false
		}
	}
	return p, atWordEnd(s, p) && (p == len(s) || !m.body(s[p]))
}

// wordLead returns the first start at or after i of lead in s at a word
// start, or -1.
func wordLead(s, lead string, i int) int {
	for {
		j := strings.Index(s[i:], lead)
		if j < 0 {
			return -1
		}
		if atWordStart(s, i+j) {
			return i + j
		}
		i += j + 1
	}
}

// jwtMatcher finds JSON Web Tokens: three base64url segments separated by
// dots, the first starting with "eyJ" at a word boundary, each at least
// minJWTSegment long. A JWE's further segments are left alone: they are
// ciphertext.
type jwtMatcher struct{}

// find is linear: after a rejected candidate the search resumes at the end
// of its first segment, after an accepted one at the start of its second. A
// candidate inside the first segment has a shorter first segment and the same
// second and third, so it fails as this one did or ends where this one does;
// a token starting in the second or third segment may run past this one and
// is looked for. Each byte is thus scanned as part of at most a few
// candidates.
func (jwtMatcher) find(s string, emit func(start, end int)) {
	segment := func(p int) int {
		for p < len(s) && isB64URL(s[p]) {
			p++
		}
		return p
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "eyJ")
		if j < 0 {
			return
		}
		start := i + j
		if !atWordStart(s, start) {
			i = start + 1
			continue
		}
		e1 := segment(start)
		i = e1
		if e1-start < minJWTSegment || e1 >= len(s) || s[e1] != '.' {
			continue
		}
		e2 := segment(e1 + 1)
		if e2-(e1+1) < minJWTSegment || e2 >= len(s) || s[e2] != '.' {
			continue
		}
		e3 := segment(e2 + 1)
		if e3-(e2+1) < minJWTSegment {
			continue
		}
		emit(start, e3)
		i = e1 + 1
	}
}

// pemMatcher finds PEM private key blocks: a "-----BEGIN <label>-----" line
// whose label ends in "PRIVATE KEY" (RSA, EC, DSA, OPENSSH, ENCRYPTED, PKCS#8
// with no prefix) or "PRIVATE KEY BLOCK" (PGP), through the END line with the
// same label. Without that END line the block runs to the end of the text:
// a truncated key is still a secret. A BEGIN line inside a block is part of
// that block.
type pemMatcher struct{}

// find is linear: a rejected BEGIN line costs at most maxPEMLabel bytes, and
// an accepted block resumes the search at its end (less the dashes a BEGIN
// line glued to the END line shares with it), which strings.Index found in
// one pass, or which is the end of the text.
func (pemMatcher) find(s string, emit func(start, end int)) {
	const begin, dashes = "-----BEGIN ", "-----"
	for i := 0; ; {
		j := strings.Index(s[i:], begin)
		if j < 0 {
			return
		}
		start := i + j
		i = start + 1
		p := start + len(begin)
		for p < len(s) && p-(start+len(begin)) < maxPEMLabel && (isUpper(s[p]) || isDigit(s[p]) || s[p] == ' ') {
			p++
		}
		label := s[start+len(begin) : p]
		if !strings.HasPrefix(s[p:], dashes) ||
			!(strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")) {
			continue
		}
		body := p + len(dashes)
		end := len(s)
		endLine := "-----END " + label + dashes
		if k := strings.Index(s[body:], endLine); k >= 0 {
			end = body + k + len(endLine)
		}
		emit(start, end)
		i = max(i, end-len(dashes))
	}
}

// urlMatcher finds the password of a URL with credentials,
// scheme://user:password@host, and only the password. The user may be empty
// (redis://:password@host). The password runs to the last '@' before the end
// of the authority, so an unencoded '@' in it is still covered.
//
// The authority also ends at a placeholder. A placeholder holds none of the
// bytes that end an authority, but the secret it replaced may have (a '/' in
// an AWS secret, a space in a PEM header): scanning on through it would find
// a URL in redacted text that was not one in the original, and redacting
// twice would differ from redacting once.
type urlMatcher struct{}

// find is linear: the scans for the user and the password stop at '/', so
// neither passes the next "://".
func (urlMatcher) find(s string, emit func(start, end int)) {
	ends := func(p int) bool {
		return endsAuthority(s[p]) || (s[p] == '[' && placeholderStartsAt(s, p))
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			return
		}
		start := i + j
		i = start + 1
		if start == 0 || !isSchemeByte(s[start-1]) {
			continue
		}
		p := start + len("://")
		for p < len(s) && !ends(p) && s[p] != '@' && s[p] != ':' {
			p++
		}
		if p >= len(s) || s[p] != ':' {
			continue
		}
		pw := p + 1
		at := -1
		for p = pw; p < len(s) && !ends(p); p++ {
			if s[p] == '@' {
				at = p
			}
		}
		if at > pw {
			emit(pw, at)
		}
	}
}

// endsAuthority reports whether c cannot be part of a URL's authority as it
// appears in text: the path, query and fragment delimiters, white space and
// control bytes, and the quotes and brackets that commonly surround a URL.
func endsAuthority(c byte) bool {
	switch c {
	case '/', '?', '#', '"', '\'', '`', '<', '>', '\\':
		return true
	}
	return c <= ' ' || c == 0x7f
}

// bearerMatcher finds the token of "Bearer <token>": a b64token (RFC 6750)
// of at least minBearerToken bytes that holds a digit, after the word and
// spaces or tabs.
type bearerMatcher struct{ lead string }

// find is linear: a candidate scans its spaces and its token, which ends at
// white space. After an accepted token the search resumes at its start,
// since the token may end in another "Bearer" followed by a space; a
// candidate inside a token is followed by a space only at the token's end, so
// each byte is scanned by at most two candidates.
func (m bearerMatcher) find(s string, emit func(start, end int)) {
	for i := 0; ; {
		start := wordLead(s, m.lead, i)
		if start < 0 {
			return
		}
		i = start + 1
		p := start + len(m.lead)
		q := p
		for q < len(s) && (s[q] == ' ' || s[q] == '\t') {
			q++
		}
		if q == p {
			continue
		}
		tokenStart := q
		for q < len(s) && isB64Token(s[q]) {
			q++
		}
		tokenEnd := q
		for q < len(s) && s[q] == '=' {
			q++
		}
		if tokenEnd-tokenStart < minBearerToken || strings.IndexFunc(s[tokenStart:tokenEnd], isDigitRune) < 0 {
			continue
		}
		emit(tokenStart, q)
		i = tokenStart
	}
}

// awsSecretMatcher finds the value assigned to an AWS secret access key:
// aws_secret_access_key = "...", AWS_SECRET_ACCESS_KEY=...,
// "SecretAccessKey": "..." (STS JSON), and the "AWS Secret Access Key
// [None]: " prompt of aws configure. The lead is "ecret" or "ECRET" so that
// strings.Index can find it in any case; the byte before must be 's' or 'S'.
type awsSecretMatcher struct{ lead string }

// find is linear: the name and the assignment are bounded, and a rejected
// value is shorter than minAWSSecret. After an accepted value the search
// resumes maxAWSNameAndAssignment bytes before its end: a name that starts
// earlier inside the value has a value that starts inside it too, which ends
// where it ends.
func (m awsSecretMatcher) find(s string, emit func(start, end int)) {
	for i := 0; ; {
		j := strings.Index(s[i:], m.lead)
		if j < 0 {
			return
		}
		start := i + j
		i = start + 1
		if start == 0 || (s[start-1] != 's' && s[start-1] != 'S') {
			continue
		}
		p, ok := start+len(m.lead), true
		for _, word := range []string{"access", "key"} {
			if p < len(s) && (s[p] == '_' || s[p] == '-' || s[p] == ' ') {
				p++
			}
			if p+len(word) > len(s) || !strings.EqualFold(s[p:p+len(word)], word) {
				ok = false
				break
			}
			p += len(word)
		}
		if !ok {
			continue
		}
		p, ok = skipAssignment(s, p)
		if !ok {
			continue
		}
		valueStart := p
		for p < len(s) && isB64(s[p]) {
			p++
		}
		if p-valueStart < minAWSSecret {
			continue
		}
		emit(valueStart, p)
		i = max(i, p-maxAWSNameAndAssignment)
	}
}

// skipAssignment skips what separates a name from its value, starting at
// s[p]: at most maxAssignment bytes of quotes, spaces, tabs, ':', '=' and '>',
// and one bracketed hint ("[None]"), with at least one ':', '=' or blank. It
// returns where the value starts.
func skipAssignment(s string, p int) (int, bool) {
	start, sep, hint := p, false, false
	for p < len(s) && p-start < maxAssignment {
		switch c := s[p]; {
		case c == ':' || c == '=' || c == ' ' || c == '\t':
			sep = true
			p++
		case c == '"' || c == '\'' || c == '>':
			p++
		case c == '[' && !hint && !placeholderStartsAt(s, p):
			// Neither is the hint a placeholder nor does it hold a '[': in
			// redacted text that would be a placeholder, and the secret it
			// replaced was no hint.
			k := strings.IndexAny(s[p+1:min(len(s), start+maxAssignment)], "[]\n")
			if k < 0 || s[p+1+k] != ']' {
				return 0, false
			}
			hint = true
			p += 1 + k + 1
		default:
			return p, sep
		}
	}
	return p, sep && p < len(s) && p-start < maxAssignment
}

func isDigit(c byte) bool      { return '0' <= c && c <= '9' }
func isUpper(c byte) bool      { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool      { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool      { return isUpper(c) || isLower(c) }
func isLowerHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' }
func isAlnum(c byte) bool      { return isDigit(c) || isUpper(c) || isLower(c) }
func isUpperAlnum(c byte) bool { return isDigit(c) || isUpper(c) }
func isAlnumDash(c byte) bool  { return isAlnum(c) || c == '-' }
func isWord(c byte) bool       { return isAlnum(c) || c == '_' }
func isB64URL(c byte) bool     { return isAlnum(c) || c == '-' || c == '_' }
func isB64(c byte) bool        { return isAlnum(c) || c == '+' || c == '/' || c == '=' }
func isDigitRune(r rune) bool  { return '0' <= r && r <= '9' }

// isB64Token reports whether c may appear in an RFC 6750 b64token before its
// '=' padding.
func isB64Token(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

// isSchemeByte reports whether c may end a URL scheme (RFC 3986 section 3.1).
func isSchemeByte(c byte) bool {
	return isAlnum(c) || c == '+' || c == '-' || c == '.'
}
