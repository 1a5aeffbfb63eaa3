package app

// HostConfig exposes the configuration the functions read from their environment.
var HostConfig = hostConfig
