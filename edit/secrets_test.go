package edit

import (
	"errors"
	"strings"
	"testing"

	"winx/evidence"
)

func TestSecretsInEdits(t *testing.T) {
	tokA := "ghp_" + strings.Repeat("a1B2", 9)
	tokB := "ghp_" + strings.Repeat("c3D4", 9)
	const ph = "[REDACTED:github-token]"
	body := "a = " + tokA + "\nmid\nb = " + tokB + "\n"
	sr := func(search, replace string) FileEdit {
		return FileEdit{Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n"}
	}
	for _, tc := range []struct {
		name string
		ed   FileEdit
		want string // "" means refused, file unchanged
	}{
		{"both kept in order", sr("a = "+ph+"\nmid\nb = "+ph+"\n", "a = "+ph+" # A\nMID\nb = "+ph+" # B\n"),
			"a = " + tokA + " # A\nMID\nb = " + tokB + " # B\n"},
		{"one line, the other untouched", sr("b = "+ph+"\n", "bee = "+ph+"\n"), "a = " + tokA + "\nmid\nbee = " + tokB + "\n"},
		{"distinct secrets, one dropped", sr("a = "+ph+"\nmid\nb = "+ph+"\n", "only = "+ph+"\n"), ""},
		{"replace dropping one", FileEdit{Mode: ModeReplace, Content: "a = " + ph + "\n"}, ""},
		{"replace keeping both", FileEdit{Mode: ModeReplace, Content: "a = " + ph + "\nb = " + ph + "\n"}, "a = " + tokA + "\nb = " + tokB + "\n"},
		{"search cuts the placeholder", sr("a = [REDACTED:github\n", "x\n"), ""},
		{"placeholder to a line without one", sr("mid\n", "mid "+ph+"\n"), ""},
		{"made-up rule", sr("mid\n", "[REDACTED:x_y-z]\n"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.write("s.txt", body)
			f.show(p, evidence.All)
			tc.ed.Path = p
			_, err := f.apply(tc.ed)
			if tc.want == "" {
				if err == nil {
					t.Errorf("applied; want refused")
				}
				if got := f.read(p); got != body {
					t.Errorf("file = %q, want unchanged", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("apply = %v", err)
			}
			if got := f.read(p); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
		})
	}
}

// A literal placeholder the file already holds (no secret behind it) may
// be kept by the text that replaces it.
func TestSecretsLiteralPlaceholderKept(t *testing.T) {
	f := newFixture(t)
	p := f.write("doc.txt", "shown as [REDACTED:github-token] in output\n")
	f.show(p, evidence.All)
	_, err := f.apply(FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nshown as [REDACTED:github-token] in output\n=======\nprinted as [REDACTED:github-token]\n>>>>>>> REPLACE\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.read(p); got != "printed as [REDACTED:github-token]\n" {
		t.Errorf("file = %q", got)
	}
	var sp *SecretPlaceholderError
	_, err = f.apply(FileEdit{Path: p, Mode: ModeReplace, Content: "[REDACTED:aws-access-key]\n"})
	if !errors.As(err, &sp) {
		t.Errorf("a placeholder of another kind = %v, want *SecretPlaceholderError", err)
	}
}

// A secret spanning lines (a private key) is one placeholder line in the
// view: coverage is still asked in the file's own line numbers, and the
// key's lines survive an edit next to them.
func TestSecretsMultiLineKey(t *testing.T) {
	f := newFixture(t)
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n-----END RSA PRIVATE KEY-----\n"
	body := "before\n" + key + "after\n"
	p := f.write("k.txt", body)
	if sv := newSecretView(nil, body); len(sv.regs) != 1 || strings.Count(sv.view, "\n") != 3 {
		t.Fatalf("the key is not one redacted region on one line: %q", sv.view)
	}
	f.show(p, evidence.Range{Start: 6, End: 6}) // "after" only
	_, err := f.apply(FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nafter\n=======\nAFTER\n>>>>>>> REPLACE\n"})
	if err != nil {
		t.Fatalf("edit next to a key, its line read = %v", err)
	}
	if got := f.read(p); got != "before\n"+key+"AFTER\n" {
		t.Errorf("file = %q", got)
	}
}

// A nearest candidate after a multi-line key is numbered as in the file:
// the key is one line of the redacted view the matcher reads.
func TestSecretsNearestNumberedAsFile(t *testing.T) {
	f := newFixture(t)
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n-----END RSA PRIVATE KEY-----\n"
	body := "before\n" + key + "func parse(input string) error {\n"
	p := f.write("k.txt", body)
	f.show(p, evidence.All)
	_, err := f.apply(FileEdit{Path: p, Mode: ModeSearchReplace, Content: "<<<<<<< SEARCH\nfunc parse(inptu string) eror {\n=======\nx\n>>>>>>> REPLACE\n"})
	var me *MatchError
	if !errors.As(err, &me) || me.Nearest == nil {
		t.Fatalf("apply = %v, want a miss with a nearest candidate", err)
	}
	if me.Nearest.StartLine != 6 || me.Nearest.Text != "~ 6\tfunc parse(input string) error {" {
		t.Errorf("nearest = %+v, want line 6 as the file numbers it", me.Nearest)
	}
}
