package dynamo

import (
	"bytes"
	"io"
	"net/http"
)

// wholeBodies hands net/http each request body as an in-memory reader. The SDK wraps a body in a
// reader net/http cannot size, and net/http then flushes the headers before it copies the body:
// two write syscalls per call where one will do. A syscall is the largest single cost of a call
// in a Lambda microVM (docs/design.md, "Performance"), and a DynamoDB request body is at most a
// few hundred KB, so reading it first trades a copy for a syscall. The SDK builds a fresh request,
// body rewound, for every attempt, so nothing is lost for its retries.
type wholeBodies struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
}

// Do sends req with its body read into memory first.
func (c wholeBodies) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 {
		return c.next.Do(req)
	}
	body := make([]byte, req.ContentLength)
	_, err := io.ReadFull(req.Body, body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c.next.Do(req)
}
