package admission

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func serve(h http.Handler, remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

func TestRateLimitPerIP(t *testing.T) {
	now := time.Unix(1000, 0)
	g := New(Options{MaxConcurrency: 4, RequestsPerMinute: 5, Now: func() time.Time { return now }})
	h := g.Wrap(ok)
	codes := map[int]int{}
	for range 8 {
		w := serve(h, "192.0.2.1:1234")
		codes[w.Code]++
		if w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") != "1" {
			t.Errorf("429 without Retry-After: 1")
		}
	}
	if codes[http.StatusOK] != 5 || codes[http.StatusTooManyRequests] != 3 {
		t.Errorf("status counts = %v, want 5 x 200 and 3 x 429", codes)
	}
	// Another source address has its own bucket.
	if w := serve(h, "192.0.2.2:1234"); w.Code != http.StatusOK {
		t.Errorf("second IP = %d, want 200", w.Code)
	}
	// The bucket refills at RequestsPerMinute.
	now = now.Add(12 * time.Second)
	if w := serve(h, "192.0.2.1:1234"); w.Code != http.StatusOK {
		t.Errorf("after 12 s = %d, want 200 (one token refilled)", w.Code)
	}
}

func TestRateTableBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	g := New(Options{MaxConcurrency: 1, RequestsPerMinute: 60, Now: func() time.Time { return now }})
	for i := range MaxRateEntries + 100 {
		now = now.Add(time.Millisecond)
		if !g.allow(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)) {
			t.Fatalf("first request of a new IP refused")
		}
	}
	if n := len(g.rates); n > MaxRateEntries {
		t.Errorf("rate table holds %d entries, want at most %d", n, MaxRateEntries)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(2)
	block := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		<-release
	})
	g := New(Options{MaxConcurrency: 2})
	h := g.Wrap(block)
	var done sync.WaitGroup
	for range 2 {
		done.Add(1)
		go func() { defer done.Done(); serve(h, "192.0.2.1:1") }()
	}
	started.Wait()
	if n := g.Active(); n != 2 {
		t.Errorf("Active() = %d with two running requests, want 2", n)
	}
	w := serve(h, "192.0.2.1:1")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Errorf("third concurrent request = %d, want 503 with Retry-After", w.Code)
	}
	close(release)
	done.Wait()
	if w := serve(g.Wrap(ok), "192.0.2.1:1"); w.Code != http.StatusOK {
		t.Errorf("after the slots freed = %d, want 200", w.Code)
	}
}

func TestRequestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{MaxConcurrency: 1, RequestTimeout: time.Second})
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			io.WriteString(w, "late")
		})
		w := serve(g.Wrap(slow), "192.0.2.1:1")
		if w.Code != http.StatusRequestTimeout || strings.Contains(w.Body.String(), "late") {
			t.Errorf("slow request = %d %q, want 408 alone", w.Code, w.Body.String())
		}
		// An answer that has started is not cut.
		stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "first ")
			time.Sleep(2 * time.Second)
			io.WriteString(w, "second")
		})
		w = serve(g.Wrap(stream), "192.0.2.1:1")
		if w.Code != http.StatusOK || w.Body.String() != "first second" {
			t.Errorf("started stream = %d %q, want 200 with both writes", w.Code, w.Body.String())
		}
	})
}

func TestDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{MaxConcurrency: 4})
		release := make(chan struct{})
		h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		go serve(h, "192.0.2.1:1")
		synctest.Wait()
		drained := make(chan struct{})
		go func() { g.Drain(context.Background()); close(drained) }()
		synctest.Wait()
		if !g.Draining() {
			t.Fatalf("Draining() = false after Drain began")
		}
		if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusServiceUnavailable {
			t.Errorf("request while draining = %d, want 503", w.Code)
		}
		select {
		case <-drained:
			t.Fatalf("Drain returned while a request ran")
		default:
		}
		close(release)
		<-drained
		if n := g.Active(); n != 0 {
			t.Errorf("Active() = %d after the drain, want 0", n)
		}
	})
}

// TestBodyOverBudgetRefusedAtOnce: a body declared larger than the whole
// byte budget could never fit, so it is refused before it reserves any of
// the budget, and a body within the budget still goes through.
func TestBodyOverBudgetRefusedAtOnce(t *testing.T) {
	g := New(Options{MaxConcurrency: 4, BodyBudget: 1 << 10, BodyWait: time.Minute})
	h := g.Wrap(ok)
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(strings.Repeat("x", 2<<10)))
	r.RemoteAddr = "192.0.2.1:1"
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("body of 2 KiB under a 1 KiB budget = %d, want 413", w.Code)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the refusal waited %v for budget that could never be enough", time.Since(start))
	}
	if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusOK {
		t.Errorf("small body afterwards = %d, want 200", w.Code)
	}
}

// A principal whose recent answers are large has all its requests take its
// heavy slot: while one of them runs, its next one queues (503 past
// HeavyWait) and another principal's does not.
func TestLargeAnswersQueuePerPrincipal(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 1<<20)) })
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	g := New(Options{MaxConcurrency: 8, Principals: 2, HeavyBytes: 1 << 20, HeavyAnswerBytes: 256 << 10,
		HeavyWait: 300 * time.Millisecond, Identify: func(r *http.Request) Identity {
			return Identity{Principal: r.Header.Get("X-Principal")}
		}})
	srv := httptest.NewServer(g.Wrap(mux))
	defer srv.Close()
	post := func(principal, path string) int {
		code, _ := postAs(t, srv.URL+path, principal)
		return code
	}
	for range 3 {
		post("alice", "/big")
	}
	done := make(chan int)
	go func() { done <- post("alice", "/block") }()
	<-started
	if c := post("alice", "/small"); c != http.StatusServiceUnavailable {
		t.Errorf("alice's request while her heavy one runs = %d, want 503 (queued behind her own)", c)
	}
	if c := post("bob", "/small"); c != http.StatusOK {
		t.Errorf("bob's request while alice's heavy one runs = %d, want 200", c)
	}
	close(release)
	if c := <-done; c != http.StatusOK {
		t.Errorf("alice's blocked request = %d, want 200", c)
	}
}

// A principal whose answers outran its answer byte rate gets 429 with
// Retry-After until it is out of debt; another principal does not.
func TestAnswerByteRatePerPrincipal(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 1<<20)) })
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	g := New(Options{MaxConcurrency: 8, Principals: 2, AnswerBytesPerSecond: 64 << 10, BytesBurst: 2 << 20,
		Identify: func(r *http.Request) Identity { return Identity{Principal: r.Header.Get("X-Principal")} }})
	srv := httptest.NewServer(g.Wrap(mux))
	defer srv.Close()
	post := func(principal, path string) (int, string) {
		return postAs(t, srv.URL+path, principal)
	}
	codes := map[int]int{}
	var retry string
	for range 4 {
		c, ra := post("alice", "/big")
		codes[c]++
		if c == http.StatusTooManyRequests {
			retry = ra
		}
	}
	if codes[http.StatusOK] != 3 || codes[http.StatusTooManyRequests] != 1 {
		t.Errorf("alice's four 1 MiB answers with a 2 MiB burst = %v, want 3 x 200 (the third into debt) then 429", codes)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 2 {
		t.Errorf("Retry-After = %q, want the seconds until 1 MiB of debt is paid at 64 KiB/s", retry)
	}
	if c, _ := post("bob", "/small"); c != http.StatusOK {
		t.Errorf("bob while alice is in debt = %d, want 200", c)
	}
}

// postAs posts {} to url as principal (the X-Principal header the tests'
// Identify reads) and returns the status and Retry-After of the answer.
func postAs(t *testing.T, url, principal string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	req.Header.Set("X-Principal", principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}
