package oplog

import (
	"log/slog"
	"net/http"
	"time"

	"winx/mcp"
)

// Handler wraps h so that every finished request is logged with
// LogHTTPRequest, under a fresh request id that it also puts in the
// request's context (mcp.WithRequestID) for the tool calls it carries;
// observe, when set, is told of the same record (the usage log). The writer it passes on keeps Flush and Unwrap, so
// streams and http.ResponseController work as before.
func Handler(l *slog.Logger, observe func(HTTPRequest), h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := mcp.NewRequestID()
		rw := &recorder{ResponseWriter: w}
		defer func() {
			status := rw.status
			if status == 0 {
				status = http.StatusOK
			}
			rec := HTTPRequest{Method: r.Method, Path: r.URL.Path, Status: status, Duration: time.Since(start), Bytes: rw.bytes, RequestID: id}
			LogHTTPRequest(l, rec)
			if observe != nil {
				observe(rec)
			}
		}()
		h.ServeHTTP(rw, r.WithContext(mcp.WithRequestID(r.Context(), id)))
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
