package tools

import "testing"

func TestCommandCategory(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"git status", CategoryVCS},
		{"cd sub && /usr/bin/git log -1", CategoryVCS},
		{"sudo -u me timeout 10 make", CategoryBuild},
		{"make test", CategoryTest},
		{"go build ./...", CategoryBuild},
		{"go test -run X ./pkg", CategoryTest},
		{"npm run test:unit", CategoryTest},
		{"cargo test", CategoryTest},
		{"pytest -q", CategoryTest},
		{"rg -n foo | head", CategorySearch},
		{"FOO=1 cat a.txt", CategoryRead},
		{"sed -n 1,5p f", CategoryRead},
		{"sed -i s/a/b/ f", CategoryEdit},
		{"sed --in-place=.bak s/a/b/ f", CategoryEdit},
		{"rm -rf build", CategoryEdit},
		{"python3 script.py", CategoryOther},
		{"$CMD arg", CategoryOther},
		{"echo 'unterminated", CategoryOther},
		{"cd /tmp", CategoryOther},
		{"", CategoryOther},
	} {
		if got := commandCategory(tc.line); got != tc.want {
			t.Errorf("commandCategory(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
