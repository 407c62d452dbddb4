package admission

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"
)

// Byte rates: a principal may send so many body bytes per second, with a
// burst, before its body is read. Counting requests alone let one principal
// send 120 bodies of 64 MiB a minute, and decoding them took the CPU the
// other principals needed; counting bytes bounds the decoding one principal
// can cause. A declared length (Content-Length) is spent before the first
// byte is read; a chunked body spends as it is read.

// Defaults of the byte limits, chosen so that on a 2-core machine one
// principal's bodies take at most a fraction of one core to decode.
const (
	// DefaultBytesPerSecond is the default body byte rate of a principal.
	DefaultBytesPerSecond = 4 << 20
	// DefaultUnauthBytesPerSecond is the default body byte rate of the
	// requests of one source IP that failed authentication (their bodies
	// are never read, but they are received).
	DefaultUnauthBytesPerSecond = 64 << 10
	// DefaultUnauthBytesBurst is the default burst of that allowance.
	DefaultUnauthBytesBurst = 1 << 20
	// DefaultHeavyBytes is the default of Options.HeavyBytes.
	DefaultHeavyBytes = 1 << 20
	// DefaultAnswerBytesPerSecond is the default of
	// Options.AnswerBytesPerSecond.
	DefaultAnswerBytesPerSecond = 16 << 20
	// DefaultHeavyAnswerBytes is the default of Options.HeavyAnswerBytes.
	DefaultHeavyAnswerBytes = 256 << 10
)

// byteBuckets is a table of token buckets of bytes, one per key, refilled
// continuously at rate up to burst. It is safe for concurrent use.
type byteBuckets struct {
	rate  float64 // bytes per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex // guards buckets
	buckets map[string]*bucket
}

func newByteBuckets(rate, burst int64, now func() time.Time) *byteBuckets {
	if rate <= 0 {
		return nil
	}
	if burst < rate {
		burst = rate
	}
	return &byteBuckets{rate: float64(rate), burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// take spends n bytes of key. When there are not enough, it spends nothing
// and returns how long until there will be; never is true when n is over
// the burst, so that no wait helps.
func (b *byteBuckets) take(key string, n int64) (wait time.Duration, never bool) {
	if b == nil || n <= 0 {
		return 0, false
	}
	if float64(n) > b.burst {
		return 0, true
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.refillLocked(key, now)
	if k.tokens < float64(n) {
		return time.Duration((float64(n) - k.tokens) / b.rate * float64(time.Second)), false
	}
	k.tokens -= float64(n)
	return 0, false
}

// refillLocked is key's bucket (a new one full; the oldest evicted when the
// table is full) with what accrued since its last use added.
func (b *byteBuckets) refillLocked(key string, now time.Time) *bucket {
	k, ok := b.buckets[key]
	if !ok {
		if len(b.buckets) >= MaxRateEntries {
			b.evictLocked(now)
		}
		k = &bucket{tokens: b.burst, last: now}
		b.buckets[key] = k
	}
	k.tokens = min(b.burst, k.tokens+now.Sub(k.last).Seconds()*b.rate)
	k.last = now
	return k
}

// charge spends n bytes of key after the fact (an answer's size is known
// only once it was written): the bucket may go into debt, down to minus
// the burst.
func (b *byteBuckets) charge(key string, n int64) {
	if b == nil || n <= 0 {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.refillLocked(key, now)
	k.tokens = max(-b.burst, k.tokens-float64(n))
}

// owed is how long until key's bucket is out of debt; 0 when it is not
// in debt.
func (b *byteBuckets) owed(key string) time.Duration {
	if b == nil {
		return 0
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.buckets[key]
	if !ok {
		return 0
	}
	tokens := min(b.burst, k.tokens+now.Sub(k.last).Seconds()*b.rate)
	if tokens >= 0 {
		return 0
	}
	return time.Duration(-tokens / b.rate * float64(time.Second))
}

// evictLocked drops full buckets (they carry no state), and if none is
// full, the least recently used one.
func (b *byteBuckets) evictLocked(now time.Time) {
	var oldest string
	for key, k := range b.buckets {
		if k.tokens+now.Sub(k.last).Seconds()*b.rate >= b.burst {
			delete(b.buckets, key)
			continue
		}
		if oldest == "" || k.last.Before(b.buckets[oldest].last) {
			oldest = key
		}
	}
	if len(b.buckets) >= MaxRateEntries && oldest != "" {
		delete(b.buckets, oldest)
	}
}

// retryAfter is the Retry-After value of a wait: whole seconds, at least 1.
func retryAfter(wait time.Duration) string {
	s := math.Ceil(wait.Seconds())
	if s < 1 {
		s = 1
	}
	if s > 3600 {
		s = 3600
	}
	return strconv.Itoa(int(s))
}

// heavy is the CPU share of large bodies: a body over Options.HeavyBytes
// (or of unknown length) is read and decoded under one slot of its
// principal, so that a principal's large bodies queue behind each other,
// and under one of a few global slots, so that decoding never takes every
// core from the small requests of the others.
type heavy struct {
	global chan struct{}
	own    principalSlots // one each
}

func newHeavy(slots int) *heavy {
	return &heavy{global: make(chan struct{}, slots), own: newPrincipalSlots(1)}
}

// acquire takes the principal's slot and a global one, waiting at most
// wait; the returned func releases both, once.
func (h *heavy) acquire(ctx context.Context, principal string, wait time.Duration) (func(), bool) {
	own := h.own.of(principal)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case own <- struct{}{}:
	case <-t.C:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
	select {
	case h.global <- struct{}{}:
	case <-t.C:
		<-own
		return nil, false
	case <-ctx.Done():
		<-own
		return nil, false
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-h.global
			<-own
		})
	}, true
}
