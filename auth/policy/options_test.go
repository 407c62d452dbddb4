package policy

import (
	"errors"
	"slices"
	"testing"
)

func TestOptTableParse(t *testing.T) {
	tbl := &optTable{permute: true, opts: []opt{
		flag("quiet", 'n'), flag("silent", 0), valued("expression", 'e'), optional("in-place", 'i'),
		valued("line-length", 'l'), flag("separate", 's'), flag("sandbox", 0),
	}}
	type got struct {
		opts     []string // long or short name "=" value
		operands []string
		bad      bool
	}
	name := func(o *opt) string {
		if o.long != "" {
			return o.long
		}
		return string(o.short)
	}
	for _, tc := range []struct {
		args []string
		want got
	}{
		{[]string{"--line-length", "1", "1e x"}, got{opts: []string{"line-length=1"}, operands: []string{"1e x"}}},
		{[]string{"--li", "1", "p"}, got{opts: []string{"line-length=1"}, operands: []string{"p"}}},
		{[]string{"--li=1", "p"}, got{opts: []string{"line-length=1"}, operands: []string{"p"}}},
		{[]string{"-nl5", "p"}, got{opts: []string{"quiet", "line-length=5"}, operands: []string{"p"}}},
		{[]string{"-nl", "5", "p"}, got{opts: []string{"quiet", "line-length=5"}, operands: []string{"p"}}},
		{[]string{"-i", "p", "f"}, got{opts: []string{"in-place"}, operands: []string{"p", "f"}}},
		{[]string{"-i.bak", "p"}, got{opts: []string{"in-place=.bak"}, operands: []string{"p"}}},
		{[]string{"--in-place", "p"}, got{opts: []string{"in-place"}, operands: []string{"p"}}},
		{[]string{"p", "f", "-n"}, got{opts: []string{"quiet"}, operands: []string{"p", "f"}}},
		{[]string{"--", "-n", "f"}, got{operands: []string{"-n", "f"}}},
		{[]string{"-", "p"}, got{operands: []string{"-", "p"}}},
		{[]string{"--s"}, got{bad: true}},       // separate, silent, sandbox
		{[]string{"--quiet=1"}, got{bad: true}}, // takes no value
		{[]string{"--nope"}, got{bad: true}},
		{[]string{"-x"}, got{bad: true}},
		{[]string{"-e"}, got{bad: true}}, // needs a value
		{[]string{"--sa"}, got{opts: []string{"sandbox"}}},
	} {
		opts, operands, reason := tbl.parse(tc.args)
		g := got{operands: operands, bad: reason != ""}
		for _, p := range opts {
			s := name(p.opt)
			if p.has {
				s += "=" + p.value
			}
			g.opts = append(g.opts, s)
		}
		if g.bad != tc.want.bad || (!g.bad && (!slices.Equal(g.opts, tc.want.opts) || !slices.Equal(g.operands, tc.want.operands))) {
			t.Errorf("parse(%q) = %+v (%s), want %+v", tc.args, g, reason, tc.want)
		}
	}
	strict := &optTable{opts: tbl.opts}
	if _, operands, _ := strict.parse([]string{"-n", "sh", "-c", "x"}); !slices.Equal(operands, []string{"sh", "-c", "x"}) {
		t.Errorf("without permute the first operand ends the options: operands %q", operands)
	}
}

// TestParserLayerLines are command lines of the same classes as the
// reproductions (TestModeAttacksRefused in mcp/tools runs those on a real
// bash), including ones a test may not run: setting the clock.
func TestParserLayerLines(t *testing.T) {
	root := t.TempDir()
	architect := Mode{Name: ModeArchitect}
	cw := Mode{Name: ModeCodeWriter, AllGlobs: true, AllowedCommands: []string{"ls", "read", "printf", "mapfile", "declare", "getopts"}}
	cwAll := Mode{Name: ModeCodeWriter, AllGlobs: true, AllCommands: true}
	denied := []struct {
		mode Mode
		line string
	}{
		{architect, "echo x | sed --line-length 1 '1e touch F'"},
		{architect, "sed --line-length=1 '1e touch F'"},
		{architect, "sed -l1 -s '1e touch F'"},
		{architect, "sed -sl 1 '1e touch F'"},
		{architect, "sed -n -e 1p --expr='1w F'"},
		{architect, "sed -s -i 1p f"},
		{architect, "sed -si.bak 1p f"},
		{architect, "sed -nf script f"},
		{architect, "sed --f=script f"},
		{architect, "sed '1e touch F' -n"},
		{architect, "sed --s 1p f"}, // ambiguous
		{architect, "echo x | xargs --process-slot cat sh -c 'touch F'"},
		{architect, "echo x | xargs --process-slot-var=V cat"},
		{architect, "echo x | xargs --max-lines sh"},
		{architect, "echo x | xargs --max-l sh"},
		{architect, "echo x | xargs -l sh"},
		{architect, "echo x | xargs -rl sh"},
		{architect, "echo x | xargs -0I{} sh -c {}"},
		{architect, "echo x | xargs --arg /dev/null sh"},
		{architect, "echo x | xargs --bogus cat"},
		{architect, "xargs -P"},
		{architect, ": \"${PS1:=\\$(touch F)}\""},
		{architect, ": \"${PS0=\\$(touch F)}\""},
		{architect, "true ${PROMPT_COMMAND:=x}"},
		{architect, "[[ ${BASH_ENV=/tmp/x} ]]"},
		{architect, "echo ${HOME=/tmp}"},
		{architect, "cat <<EOF\n${PS1:=x}\nEOF"},
		{architect, "echo ${x:=1}"},
		{architect, "for PS1 in x; do :; done"},
		{architect, "hostname -bF F"},
		{architect, "hostname -vbF F"},
		{architect, "hostname --boot"},
		{architect, "hostname --fil=F"},
		{architect, "hostname newname"},
		{architect, "date -us 2020-01-01"},
		{architect, "date --se 2020-01-01"},
		{architect, "date 010100002020"},
		{architect, "sort -ro F f"},
		{architect, "sort --out F f"},
		{architect, "sort -T/tmp f"},
		{architect, "sort --compress=sh f"},
		{architect, "tee -a F"},
		{architect, "tee --append -- F"},
		{architect, "tee /dev/null -a"},
		{architect, "date +%s -s 2020-01-01"},
		{architect, "file -bC -m x"},
		{architect, "go list -export -gcflags=-cpuprofile=F ./..."},
		{architect, "go list --compiled ./..."},
		{architect, "go list -toolexec=x ./..."},
		{architect, "go list -u -m all"},
		{architect, "go list -modfile=x.mod ./..."},
		{architect, "go list -mod=mod ./..."},
		{architect, "go list -json ./... -export"},
		{architect, "go doc -http fmt"},
		{architect, "go doc --play fmt"},
		{architect, "go env -w GOFLAGS=-x"},
		{architect, "go env -u GOFLAGS"},
		{architect, "go build ./..."},
		{architect, "go run ."},
		{architect, "go vet ./..."},
		{architect, "git -C evil status"},
		{architect, "git -c core.fsmonitor=x status"},
		{architect, "git --config-env=core.pager=X log"},
		{architect, "git --exec-path=/tmp status"},
		{architect, "git --git-dir=evil status"},
		{architect, "git --work-tree=. status"},
		{architect, "git --namespace=x log"},
		{architect, "git -p log"},
		{architect, "git --paginate log"},
		{architect, "git log -p --ext-diff"},
		{architect, "git log -p --ext"},
		{architect, "git diff --textconv"},
		{architect, "git cat-file --filters HEAD:x"},
		{architect, "git log --show-signature"},
		{architect, "git log --format=%G?"},
		{architect, "git for-each-ref --format=%(signature)"},
		{architect, "git remote show origin"},
		{architect, "git grep -iOvi x"},
		{architect, "git difftool"},
		{architect, "git mergetool"},
		{architect, "git filter-branch"},
		{architect, "git bisect run x"},
		{architect, "git submodule foreach x"},
		{architect, "git --help log"},
		{architect, "git log --help"},
		{architect, "git status --he"},
		{architect, "rg --hostname-bin=x y"},
		{cw, ": \"${PS1:=\\$(touch F)}\""},
		{cw, "ls ${PS0=x}"},
		{cw, "read PS1"},
		{cw, "read -r -a PS0"},
		{cw, "read -aPS0"},
		{cw, "read $name"},
		{cw, "printf -v PS1 %s x"},
		{cw, "printf -vPROMPT_COMMAND %s x"},
		{cw, "printf -v $n %s x"},
		{cw, "printf -v ok -v PS1 %s x"},
		{cwAll, "source ./script"},
		{cwAll, "fc -s"},
		{cwAll, "mapfile -tC 'touch F' -c 1 a"},
		{cwAll, "compgen -C 'touch F' x"},
		{cwAll, "enable -f ./x.so x"},
		{Mode{Name: ModeCodeWriter, AllGlobs: true, AllowedCommands: []string{"trap"}}, "trap 'touch F' DEBUG"},
		{cwAll, ". ./script"},
		{cw, "mapfile -t PS0"},
		{cw, "getopts ab PS1"},
		{cw, "declare PS1=x"},
		{cw, "declare -g BASH_ENV=x"},
		{cw, "declare -g HISTFILE=/tmp/h"},
		{cw, "read IFS"},
		{cw, "mapfile SHELLOPTS"},
		{cw, "read -d x BASHOPTS"},
		{cw, "printf -v BASH_XTRACEFD %s 1"},
		{cw, "read ENV"},
		{cw, "getopts a LD_PRELOAD"},
		{cwAll, "local PS4='$(x)'"},
		{cwAll, "typeset PAGER=x"},
		{cwAll, "echo ${EDITOR:=x} ${VISUAL=y}"},
		{cwAll, "export PS1='$(touch F)'"},
		{cwAll, "readarray PS0"},
		{cwAll, "for PROMPT_COMMAND in x; do :; done"},
		{cwAll, "select PS1; do :; done"},
		{cwAll, "echo ${LD_PRELOAD:=/tmp/x.so}"},
		{cwAll, "echo ${GIT_EXTERNAL_DIFF=x}"},
	}
	for _, tc := range denied {
		err := tc.mode.CheckLine(tc.line, root)
		var ce *CommandDeniedError
		var pe *CommandParseError
		if !errors.As(err, &ce) && !errors.As(err, &pe) {
			t.Errorf("%s: CheckLine(%q) = %v, want denied", tc.mode.Name, tc.line, err)
		}
	}
	allowed := []struct {
		mode Mode
		line string
	}{
		{architect, "sed -n '10,20p' f"},
		{architect, "sed -n -e 5p -e 7p f g"},
		{architect, "sed --quiet --expression=1p f"},
		{architect, "sed -nl 40 l f"},
		{architect, "sed --sandbox -n 1p f"},
		{architect, "ls | xargs -0 -n 1 -P 2 grep -l x"},
		{architect, "ls | xargs --max-args=2 cat"},
		{architect, "ls | xargs -I{} cat {}"},
		{architect, "ls | xargs"},
		{architect, "hostname"},
		{architect, "hostname -f"},
		{architect, "hostname --fqdn -s"},
		{architect, "date +%s"},
		{architect, "date -u -d @0 +%F"},
		{architect, "date --iso-8601=seconds"},
		{architect, "sort -rn -k2,2 -t, f"},
		{architect, "sort --key=2 --reverse f"},
		{architect, "ls | tee /dev/null"},
		{architect, "echo ${x:-y} ${PS1:-none} ${#PS1}"},
		{architect, "LANG=C.UTF-8 ls ${LANG:=C}"},
		{architect, "for f in a b; do echo $f; done"},
		{architect, "for _x1 in a; do ls; done"},
		{architect, "go version"},
		{architect, "go version -m ./bin/x"},
		{architect, "go env GOPATH GOROOT"},
		{architect, "go env -json"},
		{architect, "go list -json=Name,Dir -deps ./..."},
		{architect, "go list -f '{{.Dir}}' -m all"},
		{architect, "go list -tags integration -mod=vendor ./..."},
		{architect, "go doc -all fmt"},
		{architect, "go doc -u -src fmt.Println"},
		{architect, "git --no-pager log --oneline -5"},
		{architect, "git -P diff --stat"},
		{architect, "git log --output-indicator-new=+"},
		{architect, "git grep -in x"},
		{architect, "git status -s"},
		{architect, "git remote show -n origin"},
		{architect, "git remote -v"},
		{cw, "read -r line"},
		{cw, "printf -v out %s PS1"},
		{cw, "printf '%s\\n' PS1"},
		{cw, "declare x=1"},
		{cw, "mapfile -t lines"},
		{cwAll, "echo ${x:=1}"},
		{cwAll, "for i in 1 2; do echo $i; done"},
		{Mode{Name: ModeCodeWriter, AllGlobs: true, AllowedCommands: []string{"trap", "ls"}}, "trap 'ls' EXIT; trap - EXIT"},
	}
	for _, tc := range allowed {
		if err := tc.mode.CheckLine(tc.line, root); err != nil {
			t.Errorf("%s: CheckLine(%q) = %v, want allowed", tc.mode.Name, tc.line, err)
		}
	}
}

// BenchmarkCheckLineArchitect measures one architect decision on a line
// whose tools are parsed by their option tables.
func BenchmarkCheckLineArchitect(b *testing.B) {
	m := Mode{Name: ModeArchitect}
	line := `git --no-pager log --oneline -5 | sed -n -e '1,3p' | sort -rn -k2,2 | xargs -0 -n 1 grep -l x; go list -json -deps ./... ; echo "${x:-y}"`
	dir := b.TempDir()
	for b.Loop() {
		if err := m.CheckLine(line, dir); err != nil {
			b.Fatal(err)
		}
	}
}
