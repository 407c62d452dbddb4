package oplog

import (
	"log/slog"
	"net/http"
	"time"
)

// Handler wraps h so that every finished request is logged with
// LogHTTPRequest. The writer it passes on keeps Flush and Unwrap, so
// streams and http.ResponseController work as before.
func Handler(l *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recorder{ResponseWriter: w}
		defer func() {
			status := rw.status
			if status == 0 {
				status = http.StatusOK
			}
			LogHTTPRequest(l, HTTPRequest{Method: r.Method, Path: r.URL.Path, Status: status, Duration: time.Since(start), Bytes: rw.bytes})
		}()
		h.ServeHTTP(rw, r)
	})
}

// recorder notes the status and the body size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
