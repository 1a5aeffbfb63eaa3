// Package schemas carries the protocol's JSON Schemas into every binary, so a deployed function
// validates against exactly the documents published in this repository.
package schemas

import "embed"

// FS holds the v2 schemas under their repository paths (v2/...).
//
//go:embed v2
var FS embed.FS

// Examples holds one valid InterruptPayload per kind (examples/<kind>.json): documentation for
// users, fixtures for tests.
//
//go:embed examples
var Examples embed.FS
