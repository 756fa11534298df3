//go:build cgo && linux

package arrowio

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

typedef void *(*az_create_fn)(void);
typedef size_t (*az_free_fn)(void *);
typedef size_t (*az_dec_fn)(void *, void *, size_t, const void *, size_t);
typedef unsigned (*az_iserr_fn)(size_t);
typedef size_t (*az_comp_fn)(void *, void *, size_t, const void *, size_t, int);

static az_create_fn az_create_p;
static az_free_fn az_free_p;
static az_dec_fn az_dec_p;
static az_iserr_fn az_iserr_p;
static az_create_fn az_ccreate_p;
static az_free_fn az_cfree_p;
static az_comp_fn az_comp_p;

static int az_load(void) {
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) return 0;
	az_create_p = (az_create_fn)dlsym(h, "ZSTD_createDCtx");
	az_free_p = (az_free_fn)dlsym(h, "ZSTD_freeDCtx");
	az_dec_p = (az_dec_fn)dlsym(h, "ZSTD_decompressDCtx");
	az_iserr_p = (az_iserr_fn)dlsym(h, "ZSTD_isError");
	az_ccreate_p = (az_create_fn)dlsym(h, "ZSTD_createCCtx");
	az_cfree_p = (az_free_fn)dlsym(h, "ZSTD_freeCCtx");
	az_comp_p = (az_comp_fn)dlsym(h, "ZSTD_compressCCtx");
	return az_create_p && az_free_p && az_dec_p && az_iserr_p && az_ccreate_p && az_cfree_p && az_comp_p;
}
static void *az_ccreate(void) { return az_ccreate_p(); }
// az_compress returns the compressed size, or -1 on an error.
static long long az_compress(void *c, void *dst, size_t cap, const void *src, size_t n, int level) {
	size_t r = az_comp_p(c, dst, cap, src, n, level);
	return az_iserr_p(r) ? -1 : (long long)r;
}
static void *az_create(void) { return az_create_p(); }
static void az_free(void *c) { az_free_p(c); }
// az_decompress returns the decompressed size, or -1 on an error.
static long long az_decompress(void *c, void *dst, size_t cap, const void *src, size_t n) {
	size_t r = az_dec_p(c, dst, cap, src, n);
	return az_iserr_p(r) ? -1 : (long long)r;
}
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// The system's libzstd (libzstd.so.1, loaded with dlopen when present:
// no build-time dependency) decodes Parquet's zstd pages about twice as
// fast as klauspost's pure-Go decoder on float columns; without it the
// reader uses klauspost's. Output is the same bytes either way (zstd
// decoding is deterministic; TestNativeZstd checks).

var nativeZstdOK = sync.OnceValue(func() bool { return C.az_load() != 0 })

// Parquet pages are written with libzstd too: arrow-go's zstd codec is
// replaced, before anything can use it, by one that compresses with
// libzstd (at zstd's own levels; arrow-go's default level is zstd's
// default, 3) and otherwise defers to arrow-go's (streams, decoding). The
// frames are standard zstd: any reader decodes them to the same bytes.
func init() {
	if !nativeZstdOK() {
		return
	}
	if orig, err := compress.GetCodec(compress.Codecs.Zstd); err == nil {
		compress.RegisterCodec(compress.Codecs.Zstd, nativeZstdCodec{orig})
	}
}

// Decode and DecodeWithError decode a page with libzstd for arrow-go's own
// reader (string columns, and what the direct reader hands back to it):
// its zstd decoding took 44% of a read of an id column, about twice
// libzstd's time. A frame that libzstd refuses, or that does not fit dst,
// goes to arrow-go's decoder, which reports the error or grows dst.
func (c nativeZstdCodec) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

func (c nativeZstdCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if z := getNativeZstd(); z != nil && !disableNativeZstd {
		n := z.decode(dst, src)
		putNativeZstd(z)
		if n >= 0 {
			Stats.NativeZstdPages.Add(1)
			return dst[:n], nil
		}
	}
	Stats.GoZstdPages.Add(1)
	return compress.Decode(c.Codec, dst, src)
}

// zstdDefaultLevel is libzstd's default level (ZSTD_CLEVEL_DEFAULT).
const zstdDefaultLevel = 3

type nativeZstdCodec struct{ compress.Codec }

func (c nativeZstdCodec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

// EncodeLevel compresses src into dst's capacity (arrow-go sizes it with
// CompressBound), or into a new slice when it is short.
func (c nativeZstdCodec) EncodeLevel(dst, src []byte, level int) []byte {
	if level == compress.DefaultCompressionLevel {
		level = zstdDefaultLevel
	}
	z := getNativeZstdC()
	if z == nil {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	defer putNativeZstdC(z)
	if bound := int(c.CompressBound(int64(len(src)))); cap(dst) < bound {
		dst = make([]byte, 0, bound)
	}
	n := z.encode(dst[:0], src, level)
	if n < 0 {
		return c.Codec.EncodeLevel(dst, src, level) // unreachable: the bound fits
	}
	Stats.NativeZstdEncodes.Add(1)
	return dst[:n]
}

// nativeZstd is one libzstd decompression context. Contexts are C memory:
// they live in nativeZstdFree (never dropped) and are reused.
type nativeZstd struct{ ctx unsafe.Pointer }

var (
	nativeZstdMu   sync.Mutex
	nativeZstdFree []*nativeZstd
)

// getNativeZstd returns a context, or nil when libzstd is not available.
func getNativeZstd() *nativeZstd {
	if !nativeZstdOK() {
		return nil
	}
	nativeZstdMu.Lock()
	defer nativeZstdMu.Unlock()
	if n := len(nativeZstdFree); n > 0 {
		z := nativeZstdFree[n-1]
		nativeZstdFree = nativeZstdFree[:n-1]
		return z
	}
	c := C.az_create()
	if c == nil {
		return nil
	}
	return &nativeZstd{ctx: c}
}

func putNativeZstd(z *nativeZstd) {
	nativeZstdMu.Lock()
	nativeZstdFree = append(nativeZstdFree, z)
	nativeZstdMu.Unlock()
}

// nativeZstdC is one libzstd compression context (C memory, kept in
// nativeZstdCFree and reused).
type nativeZstdC struct{ ctx unsafe.Pointer }

var nativeZstdCFree []*nativeZstdC

func getNativeZstdC() *nativeZstdC {
	if !nativeZstdOK() {
		return nil
	}
	nativeZstdMu.Lock()
	defer nativeZstdMu.Unlock()
	if n := len(nativeZstdCFree); n > 0 {
		z := nativeZstdCFree[n-1]
		nativeZstdCFree = nativeZstdCFree[:n-1]
		return z
	}
	c := C.az_ccreate()
	if c == nil {
		return nil
	}
	return &nativeZstdC{ctx: c}
}

func putNativeZstdC(z *nativeZstdC) {
	nativeZstdMu.Lock()
	nativeZstdCFree = append(nativeZstdCFree, z)
	nativeZstdMu.Unlock()
}

// encode compresses src as one zstd frame at level into dst[:cap(dst)]
// and returns its length, or -1 when it does not fit.
func (z *nativeZstdC) encode(dst, src []byte, level int) int {
	if cap(dst) == 0 {
		return -1
	}
	dst = dst[:cap(dst)]
	var sp unsafe.Pointer
	if len(src) > 0 {
		sp = unsafe.Pointer(&src[0])
	}
	return int(C.az_compress(z.ctx, unsafe.Pointer(&dst[0]), C.size_t(len(dst)), sp, C.size_t(len(src)), C.int(level)))
}

// decode decompresses the zstd frame src into dst[:cap(dst)] and returns
// the decompressed length, or -1 when src is not valid zstd or does not
// fit. The C code reads src and writes dst only during the call.
func (z *nativeZstd) decode(dst, src []byte) int {
	if len(src) == 0 || cap(dst) == 0 {
		return -1
	}
	dst = dst[:cap(dst)]
	return int(C.az_decompress(z.ctx, unsafe.Pointer(&dst[0]), C.size_t(len(dst)), unsafe.Pointer(&src[0]), C.size_t(len(src))))
}
