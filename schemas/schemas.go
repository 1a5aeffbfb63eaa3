// Package schemas carries the protocol's JSON Schemas into every binary, so a deployed function
// validates against exactly the documents published in this repository.
package schemas

import "embed"

// FS holds the v2 schemas under their repository paths (v2/...).
//
//go:embed v2
var FS embed.FS
