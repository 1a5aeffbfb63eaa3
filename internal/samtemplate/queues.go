package samtemplate

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Queue is an AWS::SQS::Queue as the local stack creates it.
type Queue struct {
	LogicalID         string
	VisibilityTimeout time.Duration
	Retention         time.Duration
	// DeadLetter is the logical id of the queue its RedrivePolicy moves a message to after
	// MaxReceiveCount receives ("": none).
	DeadLetter      string
	MaxReceiveCount int
}

// Queues lists the template's queues, each after the queue it moves messages to, so that they
// can be created in order.
func (t *Template) Queues() ([]Queue, error) {
	byID := map[string]Queue{}
	for _, id := range slices.Sorted(maps.Keys(t.Resources)) {
		r := t.Resources[id]
		if r.Type != "AWS::SQS::Queue" {
			continue
		}
		var spec struct {
			VisibilityTimeout      int
			MessageRetentionPeriod int
			RedrivePolicy          struct {
				DeadLetterTargetArn any `json:"deadLetterTargetArn"`
				MaxReceiveCount     int `json:"maxReceiveCount"`
			}
		}
		if err := remarshal(r.Properties, &spec); err != nil {
			return nil, fmt.Errorf("samtemplate: %s: %w", id, err)
		}
		q := Queue{
			LogicalID:         id,
			VisibilityTimeout: time.Duration(firstNonZero(spec.VisibilityTimeout, 30)) * time.Second,
			Retention:         time.Duration(firstNonZero(spec.MessageRetentionPeriod, 345600)) * time.Second,
			MaxReceiveCount:   spec.RedrivePolicy.MaxReceiveCount,
		}
		if spec.RedrivePolicy.DeadLetterTargetArn != nil {
			dl, err := getAtt(spec.RedrivePolicy.DeadLetterTargetArn, "Arn")
			if err != nil {
				return nil, fmt.Errorf("samtemplate: %s: RedrivePolicy: %w", id, err)
			}
			q.DeadLetter = dl
		}
		byID[id] = q
	}
	var out []Queue
	var add func(id string, seen map[string]bool) error
	add = func(id string, seen map[string]bool) error {
		if slices.ContainsFunc(out, func(q Queue) bool { return q.LogicalID == id }) {
			return nil
		}
		q, ok := byID[id]
		if !ok {
			return fmt.Errorf("samtemplate: no AWS::SQS::Queue %s", id)
		}
		if seen[id] {
			return fmt.Errorf("samtemplate: queue %s redrives to itself", id)
		}
		seen[id] = true
		if q.DeadLetter != "" {
			if err := add(q.DeadLetter, seen); err != nil {
				return err
			}
		}
		out = append(out, q)
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		if err := add(id, map[string]bool{}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
