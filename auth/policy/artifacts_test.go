package policy

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"winx/auth/policy/shellparse"
)

// testArtifactDirs lays out root's temporary artifacts as guardian/artifacts
// does: <root>/.winx/tmp/session-<16 lower-case hex digits>.
func testArtifactDirs(root, own string) ArtifactDirs {
	dir := filepath.Join(root, ".winx", "tmp")
	return ArtifactDirs{Root: root, Dir: dir, Own: filepath.Join(dir, "session-"+own),
		SessionID: func(name string) (string, bool) {
			id, ok := strings.CutPrefix(name, "session-")
			return id, ok && len(id) == 16 && strings.Trim(id, "0123456789abcdef") == ""
		}}
}

func TestIsCleanup(t *testing.T) {
	c := func(args ...string) shellparse.Command { return shellparse.Command{Args: args} }
	tests := []struct {
		name string
		cmds []shellparse.Command
		want bool
	}{
		{"rm", []shellparse.Command{c("rm", "-rf", "x")}, true},
		{"cd and ls", []shellparse.Command{c("cd", "x"), c("ls", "-la")}, true},
		{"find -delete", []shellparse.Command{c("find", ".", "-name", "*.o", "-delete")}, true},
		{"find -exec", []shellparse.Command{c("find", ".", "-exec", "sh", "-c", "x", ";")}, false},
		{"find -fprint", []shellparse.Command{c("find", ".", "-fprint", "out")}, false},
		{"du to /dev/null", []shellparse.Command{{Args: []string{"du"}, Redirects: []shellparse.Redirect{{Op: ">", Target: "/dev/null"}, {Op: "2>&", Target: "1"}, {Op: "<", Target: "in"}}}}, true},
		{"dynamic name", []shellparse.Command{{Args: []string{"rm"}, Dynamic: true}}, false},
		{"ls into a file", []shellparse.Command{{Args: []string{"ls"}, Redirects: []shellparse.Redirect{{Op: ">", Target: "list"}}}}, false},
		{"assignment", []shellparse.Command{{Args: []string{"rm", "x"}, Assignments: []string{"LD_PRELOAD=x"}}}, false},
		{"other command", []shellparse.Command{c("rm", "x"), c("make")}, false},
		{"path to rm", []shellparse.Command{c("/tmp/rm", "x")}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		if got := IsCleanup(tt.cmds); got != tt.want {
			t.Errorf("IsCleanup(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestForbiddenArtifactWrite(t *testing.T) {
	root := t.TempDir()
	const own = "0123456789abcdef"
	dirs := testArtifactDirs(root, own)
	ownDir := dirs.Own
	c := func(args ...string) shellparse.Command { return shellparse.Command{Args: args} }
	dyn := func(name, arg string) shellparse.Command {
		return shellparse.Command{Args: []string{name, arg}, ArgDynamic: []bool{false, true}}
	}
	redirect := func(op, target string) shellparse.Command {
		return shellparse.Command{Args: []string{"echo"}, Redirects: []shellparse.Redirect{{Op: op, Target: target}}}
	}
	tests := []struct {
		name string
		cmds []shellparse.Command
		cwd  string
		want bool
	}{
		{"redirect to other", []shellparse.Command{redirect(">", ".winx/tmp/session-00000000000000aa/f")}, root, true},
		{"append to other", []shellparse.Command{redirect(">>", root+"/.winx/tmp/session-00000000000000aa/f")}, root, true},
		{"fd redirect", []shellparse.Command{redirect("2>", ".winx-log")}, root, true},
		{"dup is not a write", []shellparse.Command{redirect(">&", "2")}, root, false},
		{"input is not a write", []shellparse.Command{redirect("<", ".winx-x")}, root, false},
		{"dynamic redirect skipped", []shellparse.Command{{Args: []string{"echo"}, Redirects: []shellparse.Redirect{{Op: ">", Target: "$X/.winx-a", Dynamic: true}}}}, root, false},
		{"own dir", []shellparse.Command{redirect(">", ownDir+"/f")}, root, false},
		{"relative to the root from a subdirectory", []shellparse.Command{c("touch", ".winx-x")}, filepath.Join(root, "sub"), true},
		{"dotdot out of own", []shellparse.Command{c("touch", ownDir+"/../session-00000000000000aa/f")}, root, true},
		{"cp destination", []shellparse.Command{c("cp", "-r", "src", ".winx/tmp/session-00000000000000aa")}, root, true},
		{"cp source only", []shellparse.Command{c("cp", ".winx/tmp/session-00000000000000aa/f", "here")}, root, false},
		{"cp -t", []shellparse.Command{c("cp", "-t", ".winx/tmp/session-00000000000000aa", "a", "b")}, root, true},
		{"mv source", []shellparse.Command{c("mv", ".winx/tmp/session-00000000000000aa/f", "here")}, root, true},
		{"ln destination", []shellparse.Command{c("ln", "-s", "/etc/passwd", ".winx-link")}, root, true},
		{"rsync destination", []shellparse.Command{c("rsync", "-a", "-e", "ssh", "src/", ".winx/tmp/session-00000000000000aa/")}, root, true},
		{"dd of", []shellparse.Command{c("dd", "if=/dev/zero", "of=.winx/tmp/session-00000000000000aa/z")}, root, true},
		{"tee", []shellparse.Command{c("tee", "-a", ".winx-out")}, root, true},
		{"truncate size value", []shellparse.Command{c("truncate", "-s", ".winx-x", "ok")}, root, false},
		{"sudo wrapper", []shellparse.Command{c("sudo", "-n", "touch", ".winx-x"), c("touch", ".winx-x")}, root, true},
		{"known variable", []shellparse.Command{dyn("touch", "$WINX_TEMP_DIR/../session-00000000000000aa/f")}, root, true},
		{"known braced variable", []shellparse.Command{dyn("rm", "${WINX_WORKSPACE_ROOT}/.winx")}, root, true},
		{"own dir by variable", []shellparse.Command{dyn("touch", "$WINX_TEMP_DIR/f")}, root, false},
		{"unknown variable", []shellparse.Command{dyn("touch", "$HOME/.winx-x")}, root, false},
		{"command substitution", []shellparse.Command{dyn("touch", "$(echo .winx-x)")}, root, false},
		{"tilde", []shellparse.Command{dyn("touch", "~/.winx-x")}, root, false},
		{"rm .winx/tmp", []shellparse.Command{c("rm", "-rf", ".winx/tmp")}, root, true},
		{"rm the root", []shellparse.Command{c("rm", "-rf", root)}, root, true},
		{"mkdir .winx/tmp", []shellparse.Command{c("mkdir", "-p", ".winx/tmp")}, root, false},
		{"glob over sessions", []shellparse.Command{c("rm", "-rf", ".winx/tmp/session-*")}, root, true},
		{"glob in own dir", []shellparse.Command{c("rm", "-rf", ownDir+"/*")}, root, false},
		{"cd then write", []shellparse.Command{c("cd", ".winx/tmp"), c("touch", "session-00000000000000aa/x")}, root, true},
		{"outside the workspace", []shellparse.Command{c("touch", "/elsewhere/.winx-x")}, root, false},
		{"reserved name deeper down", []shellparse.Command{c("touch", "sub/.winx-x")}, root, false},
		{"read-only command", []shellparse.Command{c("cat", ".winx/tmp/session-00000000000000aa/f")}, root, false},
		// Directly in .winx/tmp, outside every session's directory.
		{"redirect into tmp", []shellparse.Command{redirect(">", ".winx/tmp/stray")}, root, true},
		{"touch into tmp by variable", []shellparse.Command{dyn("touch", "$WINX_TEMP_DIR/../stray")}, root, true},
		{"mkdir in tmp", []shellparse.Command{c("mkdir", "-p", ".winx/tmp/cache/x")}, root, true},
		{"cp into tmp itself", []shellparse.Command{c("cp", "f", ".winx/tmp")}, root, true},
		{"cp -t tmp itself", []shellparse.Command{c("cp", "-t", ".winx/tmp/", "f")}, root, true},
		{"mv into tmp", []shellparse.Command{c("mv", "f", ".winx/tmp/g")}, root, true},
		{"ln into tmp", []shellparse.Command{c("ln", "-s", "f", root+"/.winx/tmp/l")}, root, true},
		{"dd into tmp", []shellparse.Command{c("dd", "of=.winx/tmp/z")}, root, true},
		{"cd tmp then write", []shellparse.Command{c("cd", ".winx/tmp"), c("touch", "x")}, root, true},
		{"glob matching no session", []shellparse.Command{c("touch", ".winx/tmp/x*")}, root, true},
		{"rm a stray entry", []shellparse.Command{c("rm", "-f", ".winx/tmp/stray")}, root, false},
		{"mv a stray entry away", []shellparse.Command{c("mv", ".winx/tmp/stray", "here")}, root, false},
		{"mkdir a helper in own dir", []shellparse.Command{c("mkdir", "-p", ownDir+"/helper")}, root, false},
	}
	for _, tt := range tests {
		err := dirs.ForbiddenWrite(tt.cmds, tt.cwd)
		var we *ArtifactWriteError
		if (err != nil) != tt.want || (err != nil && !errors.As(err, &we)) {
			t.Errorf("%s: ForbiddenWrite = %+v, want refused %v", tt.name, err, tt.want)
		}
	}
}
