package pdarray

import (
	"fmt"
	"math"
	"strings"
)

// DType names an element type. The zero value is Invalid.
type DType uint8

// The supported dtypes. Their names are numpy's.
const (
	Invalid DType = iota
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float32
	Float64
	Bool
	numDTypes
)

type dtypeInfo struct {
	name string
	size int
}

var dtypeTable = [numDTypes]dtypeInfo{
	Invalid: {"invalid", 0},
	Int8:    {"int8", 1},
	Int16:   {"int16", 2},
	Int32:   {"int32", 4},
	Int64:   {"int64", 8},
	Uint8:   {"uint8", 1},
	Uint16:  {"uint16", 2},
	Uint32:  {"uint32", 4},
	Uint64:  {"uint64", 8},
	Float32: {"float32", 4},
	Float64: {"float64", 8},
	Bool:    {"bool", 1},
}

// DTypes lists every supported dtype in table order.
func DTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Int8; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}

// DTypeNames lists the names of every supported dtype, for messages and config.
func DTypeNames() []string {
	names := make([]string, 0, numDTypes-1)
	for _, d := range DTypes() {
		names = append(names, d.String())
	}
	return names
}

// ParseDType maps a numpy dtype name to a DType.
func ParseDType(name string) (DType, error) {
	for d := Int8; d < numDTypes; d++ {
		if dtypeTable[d].name == name {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("pdarray: unsupported dtype %q; supported: %s", name, strings.Join(DTypeNames(), ", "))
}

// String returns the numpy name of d.
func (d DType) String() string {
	if d >= numDTypes {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypeTable[d].name
}

// Size returns the size of one element in bytes (0 for Invalid).
func (d DType) Size() int {
	if d >= numDTypes {
		return 0
	}
	return dtypeTable[d].size
}

// Valid reports whether d is a supported dtype.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// NBytes returns n*d.Size(), or an error when that overflows int.
func (d DType) NBytes(n uint64) (int, error) {
	size := uint64(d.Size())
	if size == 0 {
		return 0, fmt.Errorf("pdarray: invalid dtype %v", d)
	}
	if n > uint64(math.MaxInt)/size {
		return 0, fmt.Errorf("pdarray: %d elements of %v overflow the address space", n, d)
	}
	return int(n * size), nil
}

// Element is the set of Go types that back a DType. bool is stored as one
// byte, 0 or 1, exactly as numpy stores it.
type Element interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64 | bool
}

// DTypeOf returns the DType that stores T.
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case float32:
		return Float32
	case float64:
		return Float64
	case bool:
		return Bool
	}
	panic("unreachable: Element lists exactly the types above")
}
