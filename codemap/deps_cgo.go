//go:build cgo

package codemap

import _ "github.com/smacker/go-tree-sitter"
