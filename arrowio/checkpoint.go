package arrowio

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/pdarray"
)

// Checkpoint layout (save_all / load_all): a directory holding
//
//	manifest.json   {"format": "arktos-checkpoint-1", "checksum": ChecksumName,
//	                 "arrays": [{"name", "dtype", "size", "nbytes", "file", "checksum"}...]}
//	<i>.bin         array i's elements, raw little-endian bytes (np.fromfile reads them)
//
// "checksum" is 16 hex digits of Checksum over the file's bytes.
const (
	ManifestName   = "manifest.json"
	ManifestFormat = "arktos-checkpoint-1"
	ChecksumName   = "xxh3-64 of each 16 MiB block, then xxh3-64 of the blocks' little-endian sums"
	checksumBlock  = 16 << 20
)

// Manifest describes a checkpoint.
type Manifest struct {
	Format   string          `json:"format"`
	Checksum string          `json:"checksum"`
	Arrays   []ManifestEntry `json:"arrays"`
}

// ManifestEntry describes one array of a checkpoint.
type ManifestEntry struct {
	Name     string `json:"name"`
	DType    string `json:"dtype"`
	Size     int    `json:"size"`
	NBytes   int    `json:"nbytes"`
	File     string `json:"file"`
	Checksum string `json:"checksum"`
}

// Checksum hashes b in 16 MiB blocks on up to workers goroutines, then
// hashes the blocks' sums: cheap (xxh3 runs at memory speed) and parallel.
func Checksum(b []byte, workers int) uint64 {
	nb := (len(b) + checksumBlock - 1) / checksumBlock
	sums := make([]byte, 8*nb)
	var next atomic.Int64
	var g par.Group
	for w := 0; w < max(1, min(workers, nb)); w++ {
		g.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= nb {
					return
				}
				lo := i * checksumBlock
				binary.LittleEndian.PutUint64(sums[8*i:], xxh3.Hash(b[lo:min(len(b), lo+checksumBlock)]))
			}
		})
	}
	g.Wait()
	return xxh3.Hash(sums)
}

// ChecksumBlock is the block size of Checksum.
const ChecksumBlock = checksumBlock

// BlockChecksum is Checksum's hash of one block; CombineChecksums makes the
// checksum from the blocks' hashes, in order: Checksum for a writer that
// hashes each block as it writes it.
func BlockChecksum(block []byte) uint64 { return xxh3.Hash(block) }

// CombineChecksums is Checksum from its blocks' hashes (BlockChecksum).
func CombineChecksums(blocks []uint64) uint64 {
	sums := make([]byte, 8*len(blocks))
	for i, h := range blocks {
		binary.LittleEndian.PutUint64(sums[8*i:], h)
	}
	return xxh3.Hash(sums)
}

// FormatChecksum renders a checksum as in the manifest.
func FormatChecksum(c uint64) string { return fmt.Sprintf("%016x", c) }

// ParseManifest decodes and checks a manifest.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errorf(ErrData, "%s is not valid JSON: %v", ManifestName, err)
	}
	if m.Format != ManifestFormat {
		return nil, errorf(ErrData, "%s has format %q; this server reads %q", ManifestName, m.Format, ManifestFormat)
	}
	if m.Checksum != ChecksumName {
		return nil, errorf(ErrData, "%s uses checksum %q; this server computes %q", ManifestName, m.Checksum, ChecksumName)
	}
	seen := map[string]bool{}
	for _, e := range m.Arrays {
		d, err := pdarray.ParseDType(e.DType)
		if err != nil {
			return nil, errorf(ErrData, "%s: array %q has dtype %q: %v", ManifestName, e.Name, e.DType, err)
		}
		if nb, err := d.NBytes(uint64(e.Size)); err != nil || e.Size < 0 || nb != e.NBytes {
			return nil, errorf(ErrData, "%s: array %q says %d %s elements in %d bytes", ManifestName, e.Name, e.Size, e.DType, e.NBytes)
		}
		if seen[e.Name] {
			return nil, errorf(ErrData, "%s lists array %q twice", ManifestName, e.Name)
		}
		seen[e.Name] = true
		if e.File == "" || e.File != fmt.Sprintf("%d.bin", indexOf(m.Arrays, e.Name)) {
			return nil, errorf(ErrData, "%s: array %q has file %q; expected <index>.bin", ManifestName, e.Name, e.File)
		}
	}
	return &m, nil
}

func indexOf(es []ManifestEntry, name string) int {
	for i, e := range es {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// EncodeManifest renders m (indented, for people who look).
func EncodeManifest(m *Manifest) []byte {
	m.Format, m.Checksum = ManifestFormat, ChecksumName
	b, _ := json.MarshalIndent(m, "", "  ")
	return append(b, '\n')
}
