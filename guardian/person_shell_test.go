package guardian

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// personSees reads the person's output until want appears (or 10 s).
func personSees(t *testing.T, s *Shell, a *Attachment, want string) string {
	t.Helper()
	var seen strings.Builder
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		c, err := s.PersonRead(context.Background(), a.ID, a.Offset, time.Second)
		if err != nil {
			t.Fatalf("PersonRead: %v", err)
		}
		a.Offset = c.Offset
		seen.Write(c.Data)
		if strings.Contains(seen.String(), want) {
			return seen.String()
		}
	}
	t.Fatalf("the person never saw %q; saw %q", want, seen.String())
	return ""
}

// TestPersonAttachSession: on a real shell, an attached person types and
// sees the output; every action of the agent that types or starts a
// command is refused with ErrPersonAttached while its polls still answer;
// a second person is refused; after the detach the agent's command runs
// clean and the note is handed out once.
func TestPersonAttachSession(t *testing.T) {
	s := newTestSession(t, "")
	ctx := context.Background()
	run(t, s, "sleep 0.3; echo agent-ran", 10*time.Second)

	a, err := s.AttachPerson(ctx, 30, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AttachPerson(ctx, 0, 0); !errors.Is(err, ErrPersonAttached) {
		t.Errorf("a second AttachPerson = %v, want ErrPersonAttached", err)
	}
	personSees(t, s, &a, "(winx attach)")
	if err := s.PersonWrite(ctx, a.ID, []byte("echo person-$((20+3))\r")); err != nil {
		t.Fatal(err)
	}
	personSees(t, s, &a, "person-23")

	refused := map[string]error{}
	_, refused["Run"] = s.Run(ctx, "echo agent", time.Second)
	_, refused["SendText"] = s.SendText(ctx, "x", true, 0)
	_, refused["SendKeys"] = s.SendKeys(ctx, []Key{"Enter"}, 0)
	_, refused["Interrupt"] = s.Interrupt(ctx, 0)
	_, refused["StartBackground"] = s.StartBackground(ctx, "true")
	refused["Reset"] = s.Reset(ctx)
	_, refused["Respawn"] = s.Respawn(ctx, ShellProfile{})
	for name, err := range refused {
		if !errors.Is(err, ErrPersonAttached) {
			t.Errorf("%s while a person is attached = %v, want ErrPersonAttached", name, err)
		}
	}
	if _, err := s.Poll(ctx, 0, 0); err != nil {
		t.Errorf("Poll while a person is attached = %v, want an answer", err)
	}
	if n := s.TakePersonNote(); n != "" {
		t.Errorf("a note before the detach: %q", n)
	}

	s.DetachPerson(a.ID)
	if err := s.PersonWrite(ctx, a.ID, []byte("x")); !errors.Is(err, ErrNotAttached) {
		t.Errorf("PersonWrite after the detach = %v, want ErrNotAttached", err)
	}
	note := s.TakePersonNote()
	if !strings.Contains(note, `"echo person-$((20+3))"`) {
		t.Errorf("note = %q, want the person's command line", note)
	}
	if again := s.TakePersonNote(); again != "" {
		t.Errorf("the note was handed out twice: %q", again)
	}
	o := run(t, s, "echo agent-again", 10*time.Second)
	if o.Output.Text != "agent-again" {
		t.Errorf("the agent's command after the detach printed %q, want only agent-again (no prompt, no echo)", o.Output.Text)
	}
}

// TestPersonAttachWhileRunning: a person who attaches while the agent's
// command runs gets the prompt once that command ends.
func TestPersonAttachWhileRunning(t *testing.T) {
	s := newTestSession(t, "")
	ctx := context.Background()
	o, err := s.Run(ctx, "read -r LINE; echo read-$LINE", 10*time.Second)
	if err != nil || !o.AwaitingInput {
		t.Fatalf("Run = %+v, %v; want it waiting for input", o, err)
	}
	a, err := s.AttachPerson(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PersonWrite(ctx, a.ID, []byte("typed\r")); err != nil {
		t.Fatal(err)
	}
	personSees(t, s, &a, "(winx attach)")
	s.DetachPerson(a.ID)
	if note := s.TakePersonNote(); strings.Contains(note, `"typed"`) || !strings.Contains(note, "1 line(s) typed to running programs") {
		t.Errorf("note = %q, want the line to the program counted, not recorded", note)
	}
	o, err = s.Poll(ctx, 0, 5*time.Second)
	if err != nil || o.Running || !strings.Contains(o.Output.Text, "read-typed") {
		t.Errorf("the agent's command after the person answered it = %+v, %v", o, err)
	}
}
