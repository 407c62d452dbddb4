package admission

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// cpuServer is a real listener behind a gate with a CPU share of two slots
// and two principals (one slot each), whose handlers report when they start
// computing and wait for the test before they end.
type cpuServer struct {
	t       *testing.T
	url     string
	entered chan string // the X-Tag of each request as its handler starts
	finish  chan struct{}
	abort   chan struct{} // closed when the test ends, so no handler outlives it
}

// hold computes (or waits) until the test lets one request finish.
func (s *cpuServer) hold() {
	select {
	case <-s.finish:
	case <-s.abort:
	}
}

func newCPUServer(t *testing.T, handler func(s *cpuServer, w http.ResponseWriter, r *http.Request)) *cpuServer {
	s := &cpuServer{t: t, entered: make(chan string, 16), finish: make(chan struct{}), abort: make(chan struct{})}
	g := New(Options{MaxConcurrency: 16, Principals: 2, CPUSlots: 2, Identify: func(r *http.Request) Identity {
		return Identity{Principal: r.Header.Get("X-Principal")}
	}})
	srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler(s, w, r)
	})))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.abort) }) // runs first
	s.url = srv.URL
	return s
}

// post sends a request in the background; its status arrives on the
// returned channel.
func (s *cpuServer) post(principal, tag string, body io.Reader) <-chan int {
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.url, body)
		req.Header.Set("X-Principal", principal)
		req.Header.Set("X-Tag", tag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			s.t.Error(err)
			done <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

func (s *cpuServer) expectEntered(want string) {
	s.t.Helper()
	select {
	case got := <-s.entered:
		if got != want {
			s.t.Fatalf("handler entered by %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		s.t.Fatalf("%q never started computing", want)
	}
}

// expectNothingEntered checks that no further request starts computing
// while the current holders compute: a request that must queue must not
// have started after its competitors did, so a short look suffices to catch
// a share that lets it through (a wrongly admitted request enters at once).
func (s *cpuServer) expectNothingEntered(why string) {
	s.t.Helper()
	select {
	case got := <-s.entered:
		s.t.Fatalf("%q started computing although %s", got, why)
	case <-time.After(200 * time.Millisecond):
	}
}

// A principal's second request queues behind its first, which computes;
// another principal's request computes at once beside it.
func TestCPUShareQueuesBehindOwn(t *testing.T) {
	s := newCPUServer(t, func(s *cpuServer, w http.ResponseWriter, r *http.Request) {
		s.entered <- r.Header.Get("X-Tag")
		s.hold()
	})
	a1 := s.post("alice", "alice-1", nil)
	s.expectEntered("alice-1")
	a2 := s.post("alice", "alice-2", nil)
	s.expectNothingEntered("alice's first request still computes")
	b1 := s.post("bob", "bob-1", nil)
	s.expectEntered("bob-1")
	s.finish <- struct{}{} // one of the two holders ends
	s.finish <- struct{}{} // and the other
	s.expectEntered("alice-2")
	s.finish <- struct{}{}
	for _, c := range []<-chan int{a1, a2, b1} {
		if code := <-c; code != http.StatusOK {
			t.Errorf("status %d, want 200", code)
		}
	}
}

// A request that waits rather than computes (Ticket.Pause) lets its
// principal's next request compute, and computes again only after it.
func TestCPUSharePausedWhileWaiting(t *testing.T) {
	resumed := make(chan string, 4)
	s := newCPUServer(t, func(s *cpuServer, w http.ResponseWriter, r *http.Request) {
		tag := r.Header.Get("X-Tag")
		s.entered <- tag
		if tag == "waiter" {
			ticket := TicketOf(r.Context())
			ticket.Pause()
			s.hold() // waits, like a tool on its shell
			ticket.Resume(r.Context())
			resumed <- tag
			return
		}
		s.hold()
	})
	w := s.post("alice", "waiter", nil)
	s.expectEntered("waiter")
	c := s.post("alice", "computer", nil)
	s.expectEntered("computer") // the waiter's slot was given back
	s.finish <- struct{}{}      // one of them is released...
	// ...and whichever it was, the waiter computes again only once the
	// other request gave the slot back.
	s.finish <- struct{}{}
	select {
	case <-resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter never resumed")
	}
	for _, ch := range []<-chan int{w, c} {
		if code := <-ch; code != http.StatusOK {
			t.Errorf("status %d, want 200", code)
		}
	}
}

// A body that arrives slowly does not hold its principal's slot: the
// principal's next request computes while the first body is still coming.
func TestCPUShareSlowBodyHoldsNoSlot(t *testing.T) {
	s := newCPUServer(t, func(s *cpuServer, w http.ResponseWriter, r *http.Request) {
		tag := r.Header.Get("X-Tag")
		if tag == "slow" {
			s.entered <- "reading"
		}
		io.ReadAll(r.Body)
		s.entered <- tag
	})
	host := strings.TrimPrefix(s.url, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A declared body of 10 bytes, of which 2 are sent: the handler reads.
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nX-Principal: alice\r\nX-Tag: slow\r\nContent-Length: 10\r\n\r\n{}")
	s.expectEntered("reading")
	fast := s.post("alice", "fast", strings.NewReader("{}"))
	s.expectEntered("fast")
	if code := <-fast; code != http.StatusOK {
		t.Errorf("fast request = %d, want 200", code)
	}
	io.WriteString(conn, "12345678")
	s.expectEntered("slow")
}

// The tarpit holds a bounded number of connections: per source and in all;
// past either bound a refusal is answered at once.
func TestTarpitBounded(t *testing.T) {
	tp := tarpit{delay: time.Hour, held: map[string]int{}}
	for range tarpitPerSource {
		if !tp.enter("alice") {
			t.Fatal("refused within the per-source bound")
		}
	}
	if tp.enter("alice") {
		t.Error("alice held more than tarpitPerSource connections")
	}
	for i := 0; tp.total < tarpitTotal; i++ {
		if !tp.enter(fmt.Sprint("source-", i/tarpitPerSource)) {
			t.Fatal("refused within both bounds")
		}
	}
	if tp.enter("bob") {
		t.Error("held more than tarpitTotal connections")
	}
	tp.leave("alice")
	if !tp.enter("bob") {
		t.Error("a connection left, yet bob could not enter")
	}
	// A source past its bound is not held: pause returns at once even with
	// an hour of delay.
	done := make(chan struct{})
	go func() { tp.pause(context.Background(), "bob", time.Hour); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a pause past the bounds waited")
	}
}
