package policy

import (
	"strings"
	"testing"
)

func TestDropTailPipe(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means unchanged
	}{
		{"ls | tail", "ls"},
		{"ls|tail", "ls"},
		{"ls | tail -n 20", "ls"},
		{"ls | tail -n20", "ls"},
		{"ls | tail -20", "ls"},
		{"ls |tail -20", "ls"},
		{"ls | tail --lines=5", "ls"},
		{"ls | tail --lines 5", "ls"},
		{"ls | tail\t-n\t3  ", "ls"},
		{"ls | tail -n 3\n", "ls"},
		{"make 2>&1 | tail -n 50", "make 2>&1"},
		{"cd /src && go test ./... 2>&1 | tail -30", "cd /src && go test ./... 2>&1"},
		{"grep -r foo . | sort | tail -5", "grep -r foo . | sort"},
		{"echo 'a | tail' | tail", "echo 'a | tail'"},
		{`echo "a | tail" | tail -1`, `echo "a | tail"`},
		{`echo "$(ls | tail -1)" | tail -2`, `echo "$(ls | tail -1)"`},
		{"echo $(ls | tail) | tail", "echo $(ls | tail)"},
		{`echo $'it\'s | tail' | tail`, `echo $'it\'s | tail'`},
		{`echo ${x#y} ${#z} | tail`, `echo ${x#y} ${#z}`},
		{"echo a#b | tail", "echo a#b"},
		{"(cd x; ls) | tail", "(cd x; ls)"},
		{"echo $((1 | 2)) | tail", "echo $((1 | 2))"},
		{"a || b | tail", "a || b"},
		{"ls # comment\necho hi | tail", "ls # comment\necho hi"},
		{"echo 'é ✓' | tail -n 1", "echo 'é ✓'"},

		{"ls", ""},
		{"tail -n 5 log.txt", ""},
		{"ls | tail -f", ""},
		{"ls | tail -F", ""},
		{"ls | tail --follow", ""},
		{"ls | tail -n 5 -f", ""},
		{"ls | tail file.txt", ""},
		{"ls | tail -n 5 file.txt", ""},
		{"ls | tail -n +5", ""},
		{"ls | tail +5", ""},
		{"ls | tail -n 0", ""},
		{"ls | tail -0", ""},
		{"ls | tail -c 100", ""},
		{"ls | tail -n", ""},
		{"ls | tail -5x", ""},
		{"ls | tail -n 1234567890", ""},
		{"ls | tail -", ""},
		{"ls | tail --", ""},
		{"ls | tails", ""},
		{"ls | /usr/bin/tail", ""},
		{"ls | LC_ALL=C tail", ""},
		{"ls | tail | wc -l", ""},
		{"ls | tail; echo done", ""},
		{"ls | tail && echo ok", ""},
		{"ls | tail || true", ""},
		{"ls | tail > out.txt", ""},
		{"ls | tail 2>/dev/null", ""},
		{"ls | tail &", ""},
		{"ls | tail # last lines", ""},
		{"ls | tail\necho next", ""},
		{"ls |& tail", ""},
		{"ls || tail", ""},
		{"echo x >| tail", ""},
		{`echo \| tail`, ""},
		{"echo 'ls | tail'", ""},
		{`echo "ls | tail"`, ""},
		{"echo 'unterminated | tail", ""},
		{`echo "unterminated | tail`, ""},
		{"x=$(ls | tail)", ""},
		{"(ls | tail)", ""},
		{"{ ls | tail; }", ""},
		{"ls) | tail", ""},
		{"ls # comment | tail", ""},
		{"cat <<EOF | tail\nx\nEOF", ""},
		{"cat <<<x | tail", ""},
		{"echo `ls | tail`", ""},
		{"echo `ls` | tail", ""},
		{"| tail", ""},
		{"  | tail -3", ""},
		{"ls & | tail", ""},
		{"ls \\\n| tail", ""},
		{`echo a\ | tail`, ""},
		{"case x in a) ls;; esac | tail", ""},
	}
	for _, tt := range tests {
		got, ok := DropTailPipe(tt.in)
		want, wantOK := tt.want, tt.want != ""
		if !wantOK {
			want = tt.in
		}
		if got != want || ok != wantOK {
			t.Errorf("DropTailPipe(%q) = %q, %v, want %q, %v", tt.in, got, ok, want, wantOK)
		}
	}
}

func FuzzDropTailPipe(f *testing.F) {
	for _, s := range []string{
		"ls | tail", "ls | tail -n 5", `echo "$(a | tail)" | tail -3`, "ls | tail -f",
		"echo $'\\'' | tail", "a # b\n| tail", "x=${a#b} | tail -n 1\n", "(a | tail",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, ok := DropTailPipe(in)
		if !ok {
			if got != in {
				t.Fatalf("DropTailPipe(%q) = %q, false; want the input unchanged", in, got)
			}
			return
		}
		rest, found := strings.CutPrefix(in, got)
		if got == "" || !found || !strings.HasPrefix(strings.TrimLeft(rest, " \t"), "|") {
			t.Fatalf("DropTailPipe(%q) = %q, want a prefix ending before a pipe", in, got)
		}
		if !plainTail(strings.TrimLeft(rest, " \t")[1:]) {
			t.Fatalf("DropTailPipe(%q) dropped %q, not a plain tail", in, rest)
		}
	})
}
