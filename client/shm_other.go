//go:build !linux

package client

// mapPopulate: other systems fault the pages in on first touch.
const mapPopulate = 0
