// Package transfer is the Arktos wire format shared by the server and the Go
// client: request and reply headers (msgpack), the error-code registry,
// typed argument access, and how an array's bytes are cut into frames.
// docs/protocol.md is the specification; testdata/wire/vectors.json pins the
// bytes, checked here and by the Python client's tests.
//
// Decoders in this package read bytes from the network: they never panic on
// input (FuzzDecodeRequest), and every size they are told is checked before
// anything is allocated for it.
package transfer
