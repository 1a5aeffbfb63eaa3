package devjwt

// MaxCodes and CodeTTL expose the provider's bounds to the external tests, which reach them.
const (
	MaxCodes = maxCodes
	CodeTTL  = codeTTL
)
