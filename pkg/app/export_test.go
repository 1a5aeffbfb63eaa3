package app

// HostConfig exposes the configuration the functions read from their environment.
var HostConfig = hostConfig

// APIOptions exposes the claims' names the functions read from their environment.
var APIOptions = apiOptions
