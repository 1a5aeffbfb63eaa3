// Package ddbstream stands in for DynamoDB Streams, which dynalite lacks: a DynamoDB API proxy
// in front of dynalite that the functions of the local stack talk to, and that turns every item
// a PutItem writes into the stream record DynamoDB would emit for it (INSERT or MODIFY, with the
// keys, the new image and the old one), in the order the writes were acknowledged. The local gateway feeds the
// records to the functions whose template events read the table's stream, as Lambda's event
// source mapping does (gateway.RunStreams). Only PutItem is captured: it is the only write of a
// commit, the one item type the template's stream filter passes.
package ddbstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Proxy forwards the DynamoDB API to a server and records the puts of its tables. Safe for
// concurrent use.
type Proxy struct {
	proxy *httputil.ReverseProxy
	log   *slog.Logger

	mu      sync.Mutex
	seq     int64
	streams map[string]*Stream
}

// NewProxy forwards to target (dynalite's URL).
func NewProxy(target *url.URL, log *slog.Logger) *Proxy {
	rp := httputil.NewSingleHostReverseProxy(target)
	// Every function instance keeps connections to the proxy; keep as many to dynalite, or each
	// request beyond http.DefaultTransport's two idle connections opens a new one.
	rp.Transport = &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 90 * time.Second}
	return &Proxy{proxy: rp, log: log, streams: map[string]*Stream{}}
}

// Retention is how long a stream keeps a record, as DynamoDB Streams does; without it a long
// `make run` session would hold every record it ever wrote.
const Retention = 24 * time.Hour

// Stream is the record log of one table: records appended in acknowledgement order, read by
// position, kept for Retention. Safe for concurrent use.
type Stream struct {
	Table string
	mu    sync.Mutex
	cond  *sync.Cond
	// base is the position of recs[0]: the records before it are past Retention.
	base int
	recs []events.DynamoDBEventRecord
}

// Stream returns the stream of table, recording from now on.
func (p *Proxy) Stream(table string) *Stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.streams[table]
	if !ok {
		s = &Stream{Table: table}
		s.cond = sync.NewCond(&s.mu)
		p.streams[table] = s
	}
	return s
}

// Read waits until records exist at from or after, or until stop is closed, and returns those
// there are (at most limit) and the position after them. A reader behind the oldest record kept
// starts there, as a shard iterator behind DynamoDB's trim horizon does.
func (s *Stream) Read(from, limit int, stop <-chan struct{}) ([]events.DynamoDBEventRecord, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.base+len(s.recs) <= from {
		select {
		case <-stop:
			return nil, from
		default:
		}
		s.cond.Wait()
	}
	start := max(from, s.base) - s.base
	end := min(len(s.recs), start+limit)
	return append([]events.DynamoDBEventRecord(nil), s.recs[start:end]...), s.base + end
}

// Wake makes readers look at stop again.
func (s *Stream) Wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cond.Broadcast()
}

// append adds r and drops the records older than Retention before it.
func (s *Stream) append(r events.DynamoDBEventRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
	horizon := r.Change.ApproximateCreationDateTime.Add(-Retention)
	expired := 0
	for expired < len(s.recs) && s.recs[expired].Change.ApproximateCreationDateTime.Before(horizon) {
		expired++
	}
	s.recs, s.base = s.recs[expired:], s.base+expired
	s.cond.Broadcast()
}

// ServeHTTP forwards the request; for a PutItem of a recorded table it asks for the old item
// too (to tell INSERT from MODIFY), and on success records the write and answers what the
// caller asked for. Each body is decoded once, and re-encoded only where it must change.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Header.Get("X-Amz-Target") != "DynamoDB_20120810.PutItem" {
		p.proxy.ServeHTTP(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var doc map[string]json.RawMessage
	var table, returnValues string
	if json.Unmarshal(body, &doc) != nil || json.Unmarshal(doc["TableName"], &table) != nil {
		p.forward(w, req, body, nil)
		return
	}
	if rv, ok := doc["ReturnValues"]; ok && json.Unmarshal(rv, &returnValues) != nil {
		p.forward(w, req, body, nil)
		return
	}
	p.mu.Lock()
	stream := p.streams[table]
	p.mu.Unlock()
	if stream == nil {
		p.forward(w, req, body, nil)
		return
	}
	added := returnValues == "" || returnValues == "NONE"
	if added {
		doc["ReturnValues"] = json.RawMessage(`"ALL_OLD"`)
		body, _ = json.Marshal(doc)
	}
	item := doc["Item"]
	// DynamoDB streams a write it applied whatever became of its caller: a function killed
	// while its put is in flight must not keep the put from the stream, so the put goes on
	// without the caller's cancellation, and without the writer's close notification, by which
	// the reverse proxy would cancel it too.
	req = req.WithContext(context.WithoutCancel(req.Context()))
	p.forward(struct{ http.ResponseWriter }{w}, req, body, func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return nil
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal(raw, &out); err != nil {
			return err
		}
		old, replaced := out["Attributes"]
		if added && replaced {
			delete(out, "Attributes")
			if raw, err = json.Marshal(out); err != nil {
				return err
			}
			// The SDK checks the body against DynamoDB's CRC32 header.
			resp.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(raw)), 10))
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		resp.ContentLength = int64(len(raw))
		resp.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		if err := p.record(stream, item, old); err != nil {
			p.log.Error("stream record", "table", table, "error", err)
		}
		return nil
	})
}

// forward sends body on with modify applied to the answer.
func (p *Proxy) forward(w http.ResponseWriter, req *http.Request, body []byte, modify func(*http.Response) error) {
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	if modify == nil {
		p.proxy.ServeHTTP(w, req)
		return
	}
	rp := *p.proxy
	rp.ModifyResponse = modify
	rp.ServeHTTP(w, req)
}

// keyNames are the run-log table's keys (template.yaml).
var keyNames = []string{"pk", "sk"}

// record appends the stream record of a put: the item's keys, its new image, and the old one
// when it replaced an item (a MODIFY).
func (p *Proxy) record(s *Stream, item, old json.RawMessage) error {
	var image map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal(item, &image); err != nil {
		return fmt.Errorf("the item is not DynamoDB JSON: %w", err)
	}
	var oldImage map[string]events.DynamoDBAttributeValue
	if old != nil {
		if err := json.Unmarshal(old, &oldImage); err != nil {
			return fmt.Errorf("the old item is not DynamoDB JSON: %w", err)
		}
	}
	keys := map[string]events.DynamoDBAttributeValue{}
	for _, k := range keyNames {
		if v, ok := image[k]; ok {
			keys[k] = v
		}
	}
	name := events.DynamoDBOperationTypeInsert
	if oldImage != nil {
		name = events.DynamoDBOperationTypeModify
	}
	// One lock over numbering and appending: sequence numbers grow in the stream's order.
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	seq := p.seq
	now := time.Now()
	s.append(events.DynamoDBEventRecord{
		AWSRegion:      "us-east-1",
		EventID:        fmt.Sprintf("local-%d", seq),
		EventName:      string(name),
		EventSource:    "aws:dynamodb",
		EventVersion:   "1.1",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/" + s.Table + "/stream/local",
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: now},
			Keys:                        keys,
			NewImage:                    image,
			OldImage:                    oldImage,
			SequenceNumber:              fmt.Sprintf("%021d", seq),
			SizeBytes:                   int64(len(item) + len(old)),
			StreamViewType:              string(events.DynamoDBStreamViewTypeNewAndOldImages),
		},
	})
	return nil
}
