package wire

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseStatus(t *testing.T) {
	const full = "Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t3\nSpeculation_Store_Bypass:\tthread vulnerable\n"
	tests := []struct {
		name    string
		in      string
		want    Confinement
		wantErr bool
	}{
		{name: "unconfined", in: "Name:\tsh\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n", want: Confinement{}},
		{name: "confined", in: full, want: Confinement{NoNewPrivs: true, Seccomp: 2, SeccompFilters: 3}},
		// Linux before 5.9 has no Seccomp_filters line, before 4.10 no
		// NoNewPrivs: missing fields read as zero.
		{name: "old kernel", in: "Name:\tsh\nSeccomp:\t2\n", want: Confinement{Seccomp: 2}},
		{name: "no fields", in: "Name:\tsh\n", want: Confinement{}},
		// A command name cannot fake a field: it is the value of Name.
		{name: "name lookalike", in: "Name:\tNoNewPrivs:\t1\nNoNewPrivs:\t0\n", want: Confinement{}},
		{name: "no final newline", in: "NoNewPrivs:\t1", want: Confinement{NoNewPrivs: true}},
		{name: "malformed", in: "NoNewPrivs:\tyes\n", wantErr: true},
		{name: "negative", in: "Seccomp_filters:\t-1\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatus(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseStatPPID(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{in: "1234 (bash) S 1200 1234 1234 34816 1234 4194304 0\n", want: 1200},
		// A command name may hold spaces and parentheses.
		{in: "1234 (a) S 99 (b) R 7) S 42 1 1 0\n", want: 42},
		{in: "1 (init) S 0 1 1 0\n", want: 0},
		{in: "1234 bash S 1200\n", wantErr: true},
		{in: "1234 (bash) S\n", wantErr: true},
		{in: "1234 (bash) SS 1 1\n", wantErr: true},
		{in: "1234 (bash) S x 1\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseStatPPID([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseStatPPID(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestConfinementMoreThan(t *testing.T) {
	none := Confinement{}
	nnp := Confinement{NoNewPrivs: true}
	filt := Confinement{NoNewPrivs: true, Seccomp: 2, SeccompFilters: 1}
	tests := []struct {
		name string
		c, o Confinement
		want bool
	}{
		{"equal unconfined", none, none, false},
		{"no_new_privs beyond none", nnp, none, true},
		{"no_new_privs both", nnp, nnp, false},
		{"less confined", none, nnp, false},
		{"a filter more", filt, nnp, true},
		{"more filters", Confinement{NoNewPrivs: true, Seccomp: 2, SeccompFilters: 2}, filt, true},
		{"fewer filters", filt, Confinement{NoNewPrivs: true, Seccomp: 2, SeccompFilters: 2}, false},
		{"filter mode without the count (old kernel)", Confinement{Seccomp: 2}, none, true},
		// A container runtime's own filter is everyone's: equal counts.
		{"same container", filt, filt, false},
	}
	for _, tt := range tests {
		if got := tt.c.MoreThan(tt.o); got != tt.want {
			t.Errorf("%s: (%v).MoreThan(%v) = %v, want %v", tt.name, tt.c, tt.o, got, tt.want)
		}
	}
}

// fakeProc lays out a /proc of processes given as pid → ppid.
func fakeProc(t *testing.T, parents map[int]int) Proc {
	t.Helper()
	root := t.TempDir()
	for pid, ppid := range parents {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := strconv.Itoa(pid) + " (p) S " + strconv.Itoa(ppid) + " 1 1 0 -1\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		status := "Name:\tp\nNoNewPrivs:\t" + strconv.Itoa(pid%2) + "\nSeccomp:\t0\n"
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Proc{Root: root}
}

func TestProcAncestry(t *testing.T) {
	deep := map[int]int{}
	for pid := 2; pid <= MaxAncestry+10; pid++ {
		deep[pid] = pid - 1
	}
	deep[1] = 0
	tests := []struct {
		name     string
		parents  map[int]int
		pid      int
		want     []int
		complete bool
		wantErr  error
	}{
		{name: "to init", parents: map[int]int{50: 40, 40: 30, 30: 1, 1: 0}, pid: 50, want: []int{40, 30, 1}, complete: true},
		// A parent outside the pid namespace reads as 0: the chain ends.
		{name: "namespace root", parents: map[int]int{50: 40, 40: 0}, pid: 50, want: []int{40}, complete: true},
		// An ancestor gone (exited, or hidden by hidepid) breaks the walk
		// where it is, without guessing past it.
		{name: "broken", parents: map[int]int{50: 40, 40: 30, 1: 0}, pid: 50, want: []int{40, 30}, complete: false},
		{name: "loop", parents: map[int]int{50: 40, 40: 30, 30: 40}, pid: 50, want: []int{40, 30}, complete: false},
		{name: "bounded", parents: deep, pid: MaxAncestry + 10, complete: false},
		{name: "gone", parents: map[int]int{40: 1}, pid: 50, wantErr: ErrProcGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, complete, err := fakeProc(t, tt.parents).Ancestry(tt.pid)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Ancestry(%d) error = %v, want %v", tt.pid, err, tt.wantErr)
				}
				return
			}
			if err != nil || complete != tt.complete {
				t.Fatalf("Ancestry(%d) = %v, complete %v, %v; want complete %v", tt.pid, got, complete, err, tt.complete)
			}
			if tt.name == "bounded" {
				if len(got) != MaxAncestry {
					t.Errorf("Ancestry of a chain deeper than MaxAncestry has %d entries, want %d", len(got), MaxAncestry)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Ancestry(%d) = %v, want %v", tt.pid, got, tt.want)
			}
		})
	}
}

func TestProcConfinementAndFDPid(t *testing.T) {
	p := fakeProc(t, map[int]int{7: 1, 8: 1})
	if c, err := p.Confinement(7); err != nil || !c.NoNewPrivs {
		t.Errorf("Confinement(7) = %+v, %v; want no_new_privs", c, err)
	}
	if c, err := p.Confinement(8); err != nil || c.NoNewPrivs {
		t.Errorf("Confinement(8) = %+v, %v; want none", c, err)
	}
	if _, err := p.Confinement(9); !errors.Is(err, ErrProcGone) {
		t.Errorf("Confinement(9) error = %v, want ErrProcGone", err)
	}
	// Over the bound: an error, never a partial reading.
	big := filepath.Join(p.Root, "8", "status")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", maxProcFileBytes+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Confinement(8); err == nil {
		t.Error("Confinement of an oversized status succeeded")
	}

	fdinfo := filepath.Join(p.Root, "self", "fdinfo")
	if err := os.MkdirAll(fdinfo, 0o755); err != nil {
		t.Fatal(err)
	}
	for fd, text := range map[int]string{
		5: "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t4242\nNSpid:\t4242\n",
		6: "pos:\t0\nflags:\t02000002\nPid:\t-1\nNSpid:\t-1\n", // reaped
		7: "pos:\t0\nflags:\t02\n",                             // not a pidfd
	} {
		if err := os.WriteFile(filepath.Join(fdinfo, strconv.Itoa(fd)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		fd   int
		pid  int
		isOK bool
	}{{5, 4242, true}, {6, -1, true}, {7, 0, false}, {8, 0, false}} {
		if pid, ok := p.FDPid(tt.fd); pid != tt.pid || ok != tt.isOK {
			t.Errorf("FDPid(%d) = %d, %v; want %d, %v", tt.fd, pid, ok, tt.pid, tt.isOK)
		}
	}
}
