package outbound

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTPClient posts deliveries. Safe for concurrent use; build it once per process.
type HTTPClient struct {
	allowPrivate bool
	client       *http.Client
}

// userAgent names the host to receivers.
const userAgent = "interrupthost-webhooks/1"

// scheme checks a delivery URL's scheme again when sending, as the dialer checks the address:
// what a subscription was created with is not trusted to still hold.
func (c *HTTPClient) scheme(raw string) error {
	if strings.HasPrefix(raw, "https://") || (c.allowPrivate && strings.HasPrefix(raw, "http://")) {
		return nil
	}
	return errors.New("outbound: the delivery URL is not https")
}

// Post sends body to url and reports the receiver's status; any status but 2xx, and any
// transport failure, is an error whose text names what happened (never the body it answered,
// which is the receiver's and may hold anything).
func (c *HTTPClient) Post(ctx context.Context, url string, headers map[string]string, body []byte) (int, error) {
	if err := c.scheme(url); err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var uerr interface{ Timeout() bool }
		if errors.As(err, &uerr) && uerr.Timeout() {
			return 0, fmt.Errorf("no answer within %s", Timeout)
		}
		return 0, errors.New(strings.TrimPrefix(err.Error(), "Post \""+url+"\": "))
	}
	// Drain a little so the connection can be reused; the rest is the receiver's business.
	_, _ = io.CopyN(io.Discard, resp.Body, 4096)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// NewSecret makes a subscription's signing secret as Standard Webhooks spells one: whsec_ and
// the base64 of 32 random bytes.
func NewSecret() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// Sign is the Standard Webhooks signature of a delivery: "v1," and the base64 HMAC-SHA256,
// keyed with the secret's bytes, of "<id>.<timestamp>.<body>".
func Sign(secret, id string, timestamp time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") || len(key) == 0 {
		return "", errors.New("outbound: the signing secret is not whsec_<base64>")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// signedHeaders are the Standard Webhooks headers of a delivery.
func signedHeaders(secret, id string, at time.Time, body []byte) (map[string]string, error) {
	sig, err := Sign(secret, id, at, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"webhook-id":        id,
		"webhook-timestamp": strconv.FormatInt(at.Unix(), 10),
		"webhook-signature": sig,
	}, nil
}
