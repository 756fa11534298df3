//go:build !linux

package pdarray

func adviseHugePages(b []byte) {}

func adviseHugePagesUntil(b []byte, stop func() bool) {}
