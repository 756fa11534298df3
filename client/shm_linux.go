package client

import "golang.org/x/sys/unix"

// mapPopulate maps every page of a mapping at once (Linux only).
const mapPopulate = unix.MAP_POPULATE
