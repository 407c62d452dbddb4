//go:build cgo

package codemap

// FirstSyntaxError returns the first ERROR or MISSING node of src (a file at
// path) in source order, or nil, nil when src parses cleanly.
func FirstSyntaxError(path string, src []byte) (*SyntaxIssue, error) {
	p, err := parse(path, src)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	n := p.root
	if !n.HasError() {
		return nil, nil
	}
	// Every node with an error below it has a child with one, and children
	// are in source order: the first such child leads to the first error.
	for !n.IsError() && !n.IsMissing() {
		var next = n
		count := int(n.ChildCount())
		for i := 0; i < count; i++ {
			if c := n.Child(i); c.HasError() || c.IsMissing() {
				next = c
				break
			}
		}
		if next == n {
			break
		}
		n = next
	}
	line, col, _ := position(src, n)
	return &SyntaxIssue{Line: line, Column: col, Snippet: snippetAt(src, line)}, nil
}
