package ddbstream_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/infra/local/ddbstream"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

// TestFilter: the template's pattern passes inserted and modified commits only.
func TestFilter(t *testing.T) {
	f, err := ddbstream.ParseFilter(`{"eventName": ["INSERT", "MODIFY"], "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "c#"}]}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(name, sk string) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventName: name, Change: events.DynamoDBStreamRecord{
			Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("a#run#r"), "sk": events.NewStringAttribute(sk)},
		}}
	}
	cases := []struct {
		r    events.DynamoDBEventRecord
		want bool
	}{
		{rec("INSERT", "c#00000000000000000001"), true},
		{rec("MODIFY", "c#00000000000000000001"), true},
		{rec("INSERT", "claim"), false},
		{rec("REMOVE", "c#00000000000000000001"), false},
		{events.DynamoDBEventRecord{EventName: "INSERT"}, false},
	}
	for i, c := range cases {
		if got := f.Match(c.r); got != c.want {
			t.Errorf("case %d (%s %v): %v, want %v", i, c.r.EventName, c.r.Change.Keys, got, c.want)
		}
	}
	for _, bad := range []string{`{"eventName": "INSERT"}`, `{"a": [{"anything-but": "x"}]}`, `[`} {
		if _, err := ddbstream.ParseFilter(bad); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

// TestProxyRecordsPuts: through the proxy the SDK works as against dynalite (the answers it
// gets pass its CRC32 check and hold what it asked for), and each acknowledged put of the
// recorded table becomes one record: INSERT for a new item, MODIFY over an existing one,
// nothing for a refused conditional put or another table.
func TestProxyRecordsPuts(t *testing.T) {
	_, table := localaws.NewTable(t)
	_, other := localaws.NewTable(t)
	target, _ := url.Parse("http://" + localaws.DynamoDBAddr)
	p := ddbstream.NewProxy(target, slog.New(slog.DiscardHandler))
	stream := p.Stream(table)
	srv := httptest.NewServer(p)
	defer srv.Close()
	db := localaws.DynamoDB(func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	ctx := context.Background()
	item := func(sk, v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "acme#run#r1"}, "sk": &types.AttributeValueMemberS{Value: sk}, "v": &types.AttributeValueMemberS{Value: v}}
	}
	put := func(tbl, sk, v string, cond bool) error {
		in := &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item(sk, v)}
		if cond {
			in.ConditionExpression = aws.String("attribute_not_exists(sk)")
		}
		out, err := db.PutItem(ctx, in)
		if err == nil && out.Attributes != nil {
			t.Errorf("the caller got attributes it did not ask for: %v", out.Attributes)
		}
		return err
	}
	if err := put(table, "c#1", "first", true); err != nil {
		t.Fatal(err)
	}
	if err := put(table, "c#1", "again", true); !dynamo.IsCondCheckFailed(err) {
		t.Fatalf("conditional put over an existing item: %v", err)
	}
	if err := put(table, "c#1", "over", false); err != nil {
		t.Fatal(err)
	}
	if err := put(other, "c#1", "elsewhere", true); err != nil {
		t.Fatal(err)
	}
	old, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("c#1", "asked"), ReturnValues: types.ReturnValueAllOld})
	if err != nil || old.Attributes["v"].(*types.AttributeValueMemberS).Value != "over" {
		t.Fatalf("a caller asking for the old item: %v %v", old, err)
	}
	if _, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "acme#run#r1"}}}); err != nil {
		t.Fatalf("a query through the proxy: %v", err)
	}
	recs, _ := stream.Read(0, 10, nil)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for i, want := range []struct{ name, v string }{{"INSERT", "first"}, {"MODIFY", "over"}, {"MODIFY", "asked"}} {
		r := recs[i]
		if r.EventName != want.name || r.Change.NewImage["v"].String() != want.v || r.Change.Keys["sk"].String() != "c#1" || len(r.Change.Keys) != 2 {
			t.Errorf("record %d: %s %v", i, r.EventName, r.Change.NewImage)
		}
		if (r.EventName == "MODIFY") != (r.Change.OldImage != nil) {
			t.Errorf("record %d: %s with old image %v", i, r.EventName, r.Change.OldImage)
		}
		if i == 1 && r.Change.OldImage["v"].String() != "first" {
			t.Errorf("record 1's old image: %v", r.Change.OldImage)
		}
		if i > 0 && r.Change.SequenceNumber <= recs[i-1].Change.SequenceNumber {
			t.Errorf("sequence numbers out of order: %s after %s", r.Change.SequenceNumber, recs[i-1].Change.SequenceNumber)
		}
	}
}

// TestAPutItsCallerAbandonedIsRecorded: a caller killed while its put is in flight (its
// connection closed) does not keep the put from the stream once the store applied it, as
// DynamoDB streams every write it applied.
func TestAPutItsCallerAbandonedIsRecorded(t *testing.T) {
	received, release := make(chan struct{}), make(chan struct{})
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		close(received)
		<-release // the store applies the put after its caller has gone
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{}`)
	}))
	defer store.Close()
	target, _ := url.Parse(store.URL)
	p := ddbstream.NewProxy(target, slog.New(slog.DiscardHandler))
	stream := p.Stream("runs")
	srv := httptest.NewServer(p)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"TableName":"runs","Item":{"pk":{"S":"acme#run#r1"},"sk":{"S":"c#00000000000000000001"}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
	done := make(chan error, 1)
	go func() {
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	<-received
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the caller's request was not abandoned")
	}
	close(release)
	stop := make(chan struct{})
	go func() { // the record is appended when the store answers; give up after 10 s
		<-time.After(10 * time.Second)
		close(stop)
		stream.Wake()
	}()
	records, _ := stream.Read(0, 10, stop)
	if len(records) != 1 || records[0].EventName != "INSERT" {
		t.Fatalf("records %+v, want the put's INSERT", records)
	}
}
