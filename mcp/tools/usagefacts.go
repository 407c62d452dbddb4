package tools

import (
	"path/filepath"
	"strings"

	"winx/auth/policy/shellparse"
)

// Command categories of the usage log (mcp.CallFacts.Category): a fixed
// set, so that the log says what kind of work a command was without its
// text. The first program of the line decides, after wrappers (sudo,
// timeout, env, ...) and directory changes (cd, pushd).
const (
	CategoryBuild  = "build"  // compilers, build tools, package managers
	CategoryTest   = "test"   // test runners, and "go test", "make test", "npm test"...
	CategoryVCS    = "vcs"    // git, hg, svn, gh
	CategorySearch = "search" // grep, rg, find...
	CategoryRead   = "read"   // cat, ls, head, diff...
	CategoryEdit   = "edit"   // file changes: sed -i, patch, mv, cp, rm, mkdir...
	CategoryOther  = "other"  // anything else, an unparsable line, a program named by an expansion
)

// skipPrograms come before the program that says what the line does.
var skipPrograms = map[string]bool{
	"sudo": true, "doas": true, "nice": true, "nohup": true, "time": true, "timeout": true, "xargs": true,
	"command": true, "builtin": true, "exec": true, "stdbuf": true, "ionice": true, "setsid": true,
	"env": true, "cd": true, "pushd": true, "popd": true, "export": true, "source": true, ".": true,
	"set": true, "unset": true, "true": true, ":": true,
}

var programCategory = map[string]string{
	"git": CategoryVCS, "hg": CategoryVCS, "svn": CategoryVCS, "gh": CategoryVCS,

	"pytest": CategoryTest, "jest": CategoryTest, "vitest": CategoryTest, "mocha": CategoryTest,
	"ctest": CategoryTest, "tox": CategoryTest, "nox": CategoryTest, "rspec": CategoryTest, "phpunit": CategoryTest,
	"bats": CategoryTest,

	"make": CategoryBuild, "cmake": CategoryBuild, "ninja": CategoryBuild, "meson": CategoryBuild,
	"go": CategoryBuild, "cargo": CategoryBuild, "npm": CategoryBuild, "yarn": CategoryBuild, "pnpm": CategoryBuild,
	"gcc": CategoryBuild, "g++": CategoryBuild, "cc": CategoryBuild, "clang": CategoryBuild, "clang++": CategoryBuild,
	"javac": CategoryBuild, "mvn": CategoryBuild, "gradle": CategoryBuild, "tsc": CategoryBuild,
	"pip": CategoryBuild, "pip3": CategoryBuild, "uv": CategoryBuild, "poetry": CategoryBuild,
	"dotnet": CategoryBuild, "bazel": CategoryBuild, "rustc": CategoryBuild,

	"grep": CategorySearch, "egrep": CategorySearch, "fgrep": CategorySearch, "rg": CategorySearch,
	"ag": CategorySearch, "ack": CategorySearch, "find": CategorySearch, "fd": CategorySearch,
	"locate": CategorySearch, "git-grep": CategorySearch,

	"cat": CategoryRead, "head": CategoryRead, "tail": CategoryRead, "less": CategoryRead, "more": CategoryRead,
	"ls": CategoryRead, "tree": CategoryRead, "wc": CategoryRead, "file": CategoryRead, "stat": CategoryRead,
	"diff": CategoryRead, "jq": CategoryRead, "pwd": CategoryRead, "du": CategoryRead, "nl": CategoryRead,
	"sed": CategoryRead, "awk": CategoryRead, "readlink": CategoryRead, "realpath": CategoryRead,

	"patch": CategoryEdit, "mv": CategoryEdit, "cp": CategoryEdit, "rm": CategoryEdit, "mkdir": CategoryEdit,
	"rmdir": CategoryEdit, "touch": CategoryEdit, "tee": CategoryEdit, "chmod": CategoryEdit, "ln": CategoryEdit,
	"truncate": CategoryEdit, "install": CategoryEdit,
}

// testSubcommands are the subcommands that make a build tool run tests.
var testSubcommands = map[string]bool{"test": true, "tests": true, "check": true}

// commandCategory returns the category of the command line (never any
// part of the line itself).
func commandCategory(line string) string {
	cmds, err := shellparse.Parse(line)
	if err != nil {
		return CategoryOther
	}
	for _, c := range cmds {
		if len(c.Args) == 0 {
			continue // only assignments or redirections
		}
		if c.ArgIsDynamic(0) {
			return CategoryOther
		}
		name := filepath.Base(c.Args[0])
		if skipPrograms[name] {
			continue
		}
		cat, ok := programCategory[name]
		if !ok {
			return CategoryOther
		}
		switch {
		case cat == CategoryBuild && len(c.Args) > 1 && isTestRun(name, c.Args[1:]):
			return CategoryTest
		case name == "sed" || name == "awk":
			// In place: an edit; otherwise the file is only read.
			for _, a := range c.Args[1:] {
				if a == "-i" || strings.HasPrefix(a, "-i") || a == "--in-place" || strings.HasPrefix(a, "--in-place=") {
					return CategoryEdit
				}
			}
		}
		return cat
	}
	return CategoryOther
}

// isTestRun reports a build tool asked to run tests: "go test",
// "cargo test", "npm test", "npm run test", "make test", "make check".
func isTestRun(name string, args []string) bool {
	sub := args[0]
	if (name == "npm" || name == "yarn" || name == "pnpm") && sub == "run" && len(args) > 1 {
		sub = args[1]
	}
	return testSubcommands[sub] || strings.HasPrefix(sub, "test:")
}
