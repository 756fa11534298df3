//go:build !cgo || !linux

package arrowio

// Without cgo the reader uses klauspost's zstd decoder only.

type nativeZstd struct{}

func getNativeZstd() *nativeZstd           { return nil }
func putNativeZstd(*nativeZstd)            {}
func (*nativeZstd) decode(_, _ []byte) int { return -1 }

func nativeZstdOK() bool { return false }
