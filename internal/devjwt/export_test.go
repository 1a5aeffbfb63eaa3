package devjwt

import "time"

// MaxCodes and CodeTTL expose the provider's bounds to the external tests, which reach them.
const (
	MaxCodes = maxCodes
	CodeTTL  = codeTTL
)

// SetMetadataTimeout shortens how long p waits for a client's metadata document, so that a test
// of the bound does not wait MetadataTimeout.
func SetMetadataTimeout(p *Provider, d time.Duration) { p.metadata.client.Timeout = d }
