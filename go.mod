module github.com/arktos-dev/arktos

go 1.26

require github.com/pebbe/zmq4 v1.4.0

require (
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)
