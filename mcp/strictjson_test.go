package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCheckMembers(t *testing.T) {
	type inner struct {
		Path string `json:"path"`
	}
	type embedded struct {
		Extra string `json:"extra"`
	}
	type outer struct {
		embedded
		Name  string          `json:"name,omitempty"`
		Files []inner         `json:"files"`
		Ptr   *inner          `json:"ptr"`
		Raw   json.RawMessage `json:"raw"`
		Any   map[string]any  `json:"any"`
		Plain int
		Skip  int `json:"-"`
	}
	deep := strings.Repeat(`[`, MaxBodyDepth) + strings.Repeat(`]`, MaxBodyDepth)
	for _, tc := range []struct {
		body, member string // member "" means accepted
	}{
		{`{"name":"a","extra":"b","files":[{"path":"p"}],"ptr":{"path":"q"},"Plain":1}`, ""},
		{`{"raw":{"Any":1,"aNy":2},"any":{"X":1}}`, ""},
		{`{"extra":"b","Extra":"c"}`, "Extra"},
		{`{"plain":1}`, "plain"},
		{`{"Skip":1}`, "Skip"},
		{`{"files":[{"path":"p"},{"Path":"q"}]}`, "files[1].Path"},
		{`{"ptr":{"path":"p","path":"q"}}`, "ptr.path"},
		{`{"raw":{"a":{"b":1,"b":2}}}`, "raw.a.b"},
		{`{"any":{"k":1,"k":2}}`, "any.k"},
		{`{"raw":` + deep[1:len(deep)-1] + `}`, ""},
		{`{"raw":` + deep + `}`, "raw" + strings.Repeat("[0]", MaxBodyDepth-1)},
		{`{"name":`, ""}, // malformed: left to the decoder
	} {
		got := checkMembers([]byte(tc.body), reflect.TypeFor[outer]())
		switch {
		case tc.member == "" && got != nil:
			t.Errorf("checkMembers(%.60q) = %q (%s), want accepted", tc.body, got.member, got.msg)
		case tc.member != "" && (got == nil || got.member != tc.member):
			t.Errorf("checkMembers(%.60q) = %+v, want refused at %q", tc.body, got, tc.member)
		}
	}
}
