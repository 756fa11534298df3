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

static az_create_fn az_create_p;
static az_free_fn az_free_p;
static az_dec_fn az_dec_p;
static az_iserr_fn az_iserr_p;

static int az_load(void) {
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) return 0;
	az_create_p = (az_create_fn)dlsym(h, "ZSTD_createDCtx");
	az_free_p = (az_free_fn)dlsym(h, "ZSTD_freeDCtx");
	az_dec_p = (az_dec_fn)dlsym(h, "ZSTD_decompressDCtx");
	az_iserr_p = (az_iserr_fn)dlsym(h, "ZSTD_isError");
	return az_create_p && az_free_p && az_dec_p && az_iserr_p;
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
)

// The system's libzstd (libzstd.so.1, loaded with dlopen when present:
// no build-time dependency) decodes Parquet's zstd pages about twice as
// fast as klauspost's pure-Go decoder on float columns; without it the
// reader uses klauspost's. Output is the same bytes either way (zstd
// decoding is deterministic; TestNativeZstd checks).

var nativeZstdOK = sync.OnceValue(func() bool { return C.az_load() != 0 })

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
