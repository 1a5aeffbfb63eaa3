// Package queues stands in for the template's SQS queues on moto's SQS API, which the local
// stack serves beside Secrets Manager: it creates each AWS::SQS::Queue of the template (with its
// visibility timeout, retention and redrive policy) under the stack's prefix, and sends,
// receives and deletes messages by the queues' logical ids, for the gateway's event sources (a
// stream's on-failure destination, an SQS event) and for tests. It is the one user of the SQS
// SDK; the functions call no queue themselves.
package queues

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// Queues are the template's queues as one stack instance created them. Safe for concurrent use.
type Queues struct {
	client *sqs.Client
	urls   map[string]string
	arns   map[string]string
}

// NewClient is a client of the SQS API at endpoint (moto's URL), with the local stack's fixed
// region and credentials, so that no call can reach a real account.
func NewClient(endpoint string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}

// Create creates the template's queues named <prefix>-<LogicalID>, each after the queue it
// redrives to.
func Create(ctx context.Context, client *sqs.Client, tmpl *samtemplate.Template, prefix string) (*Queues, error) {
	qs, err := tmpl.Queues()
	if err != nil {
		return nil, err
	}
	q := &Queues{client: client, urls: map[string]string{}, arns: map[string]string{}}
	for _, spec := range qs {
		attrs := map[string]string{
			string(types.QueueAttributeNameVisibilityTimeout):      strconv.Itoa(int(spec.VisibilityTimeout / time.Second)),
			string(types.QueueAttributeNameMessageRetentionPeriod): strconv.Itoa(int(spec.Retention / time.Second)),
		}
		if spec.DeadLetter != "" {
			policy, err := json.Marshal(map[string]any{"deadLetterTargetArn": q.arns[spec.DeadLetter], "maxReceiveCount": spec.MaxReceiveCount})
			if err != nil {
				return nil, err
			}
			attrs[string(types.QueueAttributeNameRedrivePolicy)] = string(policy)
		}
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-" + spec.LogicalID), Attributes: attrs})
		if err != nil {
			return nil, fmt.Errorf("queues: create %s: %w", spec.LogicalID, err)
		}
		got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			return nil, fmt.Errorf("queues: %s's ARN: %w", spec.LogicalID, err)
		}
		q.urls[spec.LogicalID], q.arns[spec.LogicalID] = *out.QueueUrl, got.Attributes[string(types.QueueAttributeNameQueueArn)]
	}
	return q, nil
}

// Open finds the queues Create made under prefix: for a test or a tool beside a running stack.
func Open(ctx context.Context, client *sqs.Client, tmpl *samtemplate.Template, prefix string) (*Queues, error) {
	qs, err := tmpl.Queues()
	if err != nil {
		return nil, err
	}
	q := &Queues{client: client, urls: map[string]string{}, arns: map[string]string{}}
	for _, spec := range qs {
		out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(prefix + "-" + spec.LogicalID)})
		if err != nil {
			return nil, fmt.Errorf("queues: %s: %w", spec.LogicalID, err)
		}
		q.urls[spec.LogicalID] = *out.QueueUrl
	}
	return q, nil
}

// URLs maps each queue's logical id to its URL: what !Ref of it resolves to.
func (q *Queues) URLs() map[string]string {
	return maps.Clone(q.urls)
}

func (q *Queues) url(id string) (string, error) {
	u, ok := q.urls[id]
	if !ok {
		return "", fmt.Errorf("queues: no queue %s", id)
	}
	return u, nil
}

// Send sends body to queue id.
func (q *Queues) Send(ctx context.Context, id, body string) error {
	u, err := q.url(id)
	if err != nil {
		return err
	}
	_, err = q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &u, MessageBody: &body})
	return err
}

// Receive waits up to wait for at most max messages of queue id, as Lambda hands them to a
// function (events.SQSMessage); each is invisible to other receivers for the queue's visibility
// timeout, and counted as a receive towards its redrive policy.
func (q *Queues) Receive(ctx context.Context, id string, max int, wait time.Duration) ([]events.SQSMessage, error) {
	u, err := q.url(id)
	if err != nil {
		return nil, err
	}
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: &u, MaxNumberOfMessages: int32(max), WaitTimeSeconds: int32(wait / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
	})
	if err != nil {
		return nil, err
	}
	msgs := make([]events.SQSMessage, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: q.arns[id], AWSRegion: "us-east-1",
		})
	}
	return msgs, nil
}

// Delete deletes a received message of queue id by its receipt handle.
func (q *Queues) Delete(ctx context.Context, id, receipt string) error {
	u, err := q.url(id)
	if err != nil {
		return err
	}
	_, err = q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &u, ReceiptHandle: &receipt})
	return err
}

// Remove deletes the queues.
func (q *Queues) Remove(ctx context.Context) error {
	for id, u := range q.urls {
		if _, err := q.client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
			return fmt.Errorf("queues: delete %s: %w", id, err)
		}
	}
	return nil
}
