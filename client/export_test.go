package client

// For the external tests (compiled only with them).

// ConnectTimeout is connectTimeout.
var ConnectTimeout = &connectTimeout
