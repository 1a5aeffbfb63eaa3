package host

// Version is this host's release, as the discovery document reports it and CHANGELOG.md records
// it: semantic versioning, where the stored form of a run's log and the API only grow within a
// major version (docs/design.md, "Versions").
const Version = "0.9.0"

// Implementation names the software serving the API, beside the protocol it implements.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}
