//go:build !linux

package pdarray

func adviseHugePages(b []byte) {}
