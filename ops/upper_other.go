//go:build !amd64

package ops

// clearUpper has nothing to clear off amd64 (upper_amd64.go).
func clearUpper() {}
