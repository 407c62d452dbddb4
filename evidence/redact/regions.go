package redact

// Region is one redacted region of a text: s[Start:End] is replaced by
// Placeholder in what String returns.
type Region struct {
	Start, End  int
	Placeholder string
}

// Regions returns the regions String replaces in s, in order and disjoint
// (nil when r is disabled or s holds no secret). A caller that shows the
// redacted text and later gets that text back (an edit's SEARCH block) uses
// them to map the placeholders to the bytes they stand for.
func (r *Redactor) Regions(s string) []Region {
	if r != nil && r.disabled {
		return nil
	}
	spans := find(s)
	var out []Region
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		out = append(out, Region{Start: cur.start, End: cur.end, Placeholder: placeholder(rules[cur.rule].Name)})
	}
	return out
}

// PlaceholderPrefix starts every placeholder.
const PlaceholderPrefix = placeholderPrefix

// Disabled reports whether r was made with New(true) and leaves text as it
// is.
func (r *Redactor) Disabled() bool { return r != nil && r.disabled }
