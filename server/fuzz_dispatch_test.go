package server

import (
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/transfer"
)

// FuzzDispatch sends every command (but shutdown and the tests' own)
// requests whose arguments are built from the fuzzer's bytes: names the
// handlers read (taken from this package's source), and values from stored
// arrays' names, the string literals of server and ops, and edge-case
// numbers. A handler must answer each with a result or an error: a panic,
// in the handler or in a goroutine it starts (which runRecovered cannot
// catch, and which would stop a real server), fails the fuzzer.
//
//	go test -run '^$' -fuzz FuzzDispatch -fuzztime 2m ./server
func FuzzDispatch(f *testing.F) {
	for _, seed := range [][]byte{
		{0}, {1, 0, 0}, {2, 1, 2, 3, 4}, {5, 9, 1, 9, 2, 9, 3}, {7, 200, 100, 3, 50, 6, 70},
		{11, 0, 1, 1, 2, 2, 3, 3, 4}, {13, 4, 40, 5, 41, 6, 42}, {17, 1, 255, 2, 254},
	} {
		f.Add(seed)
	}
	fz := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fz.mu.Lock() // one request at a time: the base arrays are reset between
		defer fz.mu.Unlock()
		fz.reset(t)
		cmd, args := fz.request(data)
		fz.send(t, cmd, args, data)
	})
}

// send dispatches cmd with args (and payload frames of data where the
// command takes them), runs its reply's after, and returns the handler's
// error. Every request here (arrays of at most 40,000 elements, 64 MiB)
// takes milliseconds: one still running after 10 s is a hang, reported
// (with every goroutine's stack) as a crash; a stream it left locked fails
// t.
func (fz *fuzzServer) send(t testing.TB, cmd string, args map[string]any, data []byte) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			panic(fmt.Sprintf("%s %#v has run for 10 s", cmd, args))
		}
	}()
	var payload [][]byte
	if commands[cmd].payload {
		payload = fuzzFrames(data)
	}
	h := &held{}
	resp, err := fz.s.dispatch(&transfer.Request{V: transfer.Version, ID: 1, Cmd: cmd, Args: args}, payload, nil, h)
	if err == nil && resp.after != nil {
		resp.after()
	}
	for _, x := range h.streams {
		if x.holder.Load() == h {
			t.Errorf("%s %v left stream %d locked", cmd, args, x.id)
		}
	}
	return err
}

// fuzzFrames makes payload frames of data's bytes (an upload's): its last
// byte says how many (0 to 3) and where they split.
func fuzzFrames(data []byte) [][]byte {
	if len(data) < 2 {
		return nil
	}
	last := data[len(data)-1]
	body := data[1 : len(data)-1]
	var frames [][]byte
	for range int(last & 3) {
		cut := min(len(body), int(last>>2)%9*8)
		frames = append(frames, body[:cut])
		body = body[cut:]
	}
	return frames
}

type fuzzServer struct {
	mu      sync.Mutex
	s       *Server
	base    map[string]*pdarray.Array
	cmds    []string
	keys    []string                  // every argument name handlers read
	cmdKeys map[string][]string       // the names each command takes (probed)
	valid   map[string]map[string]any // a request of each command its handler ran (probed; most commands)
	names   []any                     // stored arrays' names
	numbers []any
	strs    []any // string literals of server and ops
	others  []any
}

func newFuzzServer(f testing.TB) *fuzzServer {
	dir := f.TempDir()
	s, err := New(Config{Addr: "inproc://fuzz-dispatch", Workers: 2, MaxMemory: 64 << 20, FrameSize: 1 << 16,
		StreamPort: -1, DataDir: dir, TokenFile: filepath.Join(dir, "token"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		s.router.Close()
		s.pull.Close()
		s.zctx.Term()
	})
	fz := &fuzzServer{s: s, base: map[string]*pdarray.Array{}}
	// Base arrays: one of each dtype with small, repeated values (group
	// keys), an empty one, and a longer int64.
	for _, name := range pdarray.DTypeNames() {
		dt, err := pdarray.ParseDType(name)
		if err != nil {
			f.Fatal(err)
		}
		a, err := pdarray.Alloc(dt, 7)
		if err != nil {
			f.Fatal(err)
		}
		for i, b := range a.Bytes() {
			b = byte(i % 3)
			if dt != pdarray.Bool && i%a.DType().Size() != 0 {
				b = 0
			}
			a.Bytes()[i] = b
		}
		fz.base["a_"+name] = a
	}
	fz.base["empty"] = pdarray.FromSlice([]int64{})
	// Over ops' minPar (32,768 elements), so kernels split work over
	// workers here: their goroutines' code is fuzzed too.
	long := make([]int64, 40000)
	longF := make([]float64, len(long))
	for i := range long {
		long[i] = int64(i*7919) % 101
		longF[i] = float64(i%13) / 4
	}
	fz.base["long"] = pdarray.FromSlice(long)
	fz.base["long_f"] = pdarray.FromSlice(longF)
	// A string array (cmd_strings.go): "ab", "", "cdé".
	fz.base["s_off"] = pdarray.FromSlice([]int64{0, 2, 2, 6})
	fz.base["s_bytes"] = pdarray.FromSlice([]uint8("abcd\xc3\xa9"))
	fz.base["floats"] = pdarray.FromSlice([]float64{1.5, math.NaN(), math.Copysign(0, -1), math.Inf(1), 2.5, 1.5, math.Inf(-1)})

	for name := range commands {
		if name != "shutdown" && !strings.HasPrefix(name, "test_") {
			fz.cmds = append(fz.cmds, name)
		}
	}
	slices.Sort(fz.cmds)
	fz.keys, fz.strs = fuzzVocabulary(f)
	for name := range fz.base {
		fz.names = append(fz.names, name)
	}
	slices.SortFunc(fz.names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	fz.names = append(fz.names, "nope", "")
	fz.numbers = []any{int64(0), int64(1), int64(2), int64(3), int64(-1), int64(-7), int64(6), int64(7), int64(8),
		int64(1 << 31), int64(1 << 40), int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxUint64), uint64(5), int64(100)}
	fz.others = []any{0.0, 0.5, -1.5, math.NaN(), math.Inf(1), math.Inf(-1), true, false, nil, "../escape", "/etc/passwd",
		"x.parquet", "d/x.arrow", []byte{1, 2, 3}, map[string]any{"a": int64(1)}, []any{}}
	fz.cmdKeys, fz.valid = map[string][]string{}, map[string]map[string]any{}
	fz.reset(f)
	for _, cmd := range fz.cmds {
		fz.cmdKeys[cmd] = fz.probe(f, cmd)
	}
	return fz
}

// probe finds the arguments cmd takes from its own errors: each missing
// one is added until the handler names what it takes in refusing an
// unknown one. Each value is the first of the base arrays' names, the
// numbers, a few lists, the vocabulary's strings and the other values that
// the handler does not refuse (an error naming the argument or quoting
// the value); the required arguments so found, when the handler runs with
// them, are kept in fz.valid (most commands).
func (fz *fuzzServer) probe(tb testing.TB, cmd string) []string {
	missingRe := regexp.MustCompile(`needs (?:argument|an array name) '([a-z_0-9]+)'|argument '([a-z_0-9]+)' is required`)
	takesRe := regexp.MustCompile(`has no argument 'zz_probe'; it takes arguments (.*)$`)
	// (A refused request changes nothing: the arrays are put back only
	// after one that ran.)
	try := func(args map[string]any) error {
		resp, err := fz.s.dispatch(&transfer.Request{V: transfer.Version, ID: 1, Cmd: cmd, Args: args}, nil, nil, &held{})
		if err == nil {
			if resp.after != nil {
				resp.after() // releases what the reply held
			}
			fz.reset(tb)
		}
		return err
	}
	refuses := func(err error, k string, v any) bool {
		if err == nil {
			return false
		}
		msg := err.Error()
		return strings.Contains(msg, "'"+k+"'") || strings.Contains(msg, "'"+k+"[") || len(k) > 2 && strings.Contains(msg, " "+k+" ") ||
			strings.Contains(msg, fmt.Sprintf("'%v'", v)) || strings.Contains(msg, fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	candidates := append([]any{"a_int64", int64(1)}, fz.names...)
	candidates = append(candidates, fz.numbers...)
	candidates = append(candidates, []any{"a_int64"}, []any{"long", "long_f"}, []any{"a_int32", "a_uint8"},
		[]any{int64(1), int64(0)}, []any{"s_off", "s_bytes"})
	for _, dt := range pdarray.DTypeNames() {
		candidates = append(candidates, dt)
	}
	candidates = append(append(candidates, fz.strs...), fz.others...)
	args := map[string]any{}
	if strings.HasPrefix(cmd, "groupby_") {
		args["ids"] = "a_int32" // group ids (0..2), which no value alone is found to be
	}
	pick := func(k string) {
		old, ok := args[k]
		for _, v := range candidates {
			if args[k] = v; !refuses(try(args), k, v) {
				return
			}
		}
		if args[k] = candidates[0]; ok {
			args[k] = old
		}
	}
	missing := func(msg string) string {
		if m := missingRe.FindStringSubmatch(msg); m != nil {
			return m[1] + m[2]
		}
		return ""
	}
	var keys []string
	for range 12 {
		probe := map[string]any{"zz_probe": int64(1)}
		for k, v := range args {
			probe[k] = v
		}
		err := try(probe)
		if err == nil {
			break
		}
		msg := err.Error()
		if k := missing(msg); k != "" && args[k] == nil {
			pick(k)
			keys = append(keys, k)
			continue
		}
		if m := takesRe.FindStringSubmatch(msg); m != nil {
			keys = append(keys, strings.Split(m[1], ", ")...)
		}
		break
	}
	// A value may be refused only once the others are right.
	for range 4 {
		err := try(args)
		if err == nil {
			fz.valid[cmd] = args
			break
		}
		if k := missing(err.Error()); k != "" && args[k] == nil {
			pick(k)
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if refuses(err, k, args[k]) {
				pick(k)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// fuzzVocabulary reads the argument names handlers ask for and the short
// string literals of server and ops from their source.
func fuzzVocabulary(f testing.TB) (keys []string, values []any) {
	argRe := regexp.MustCompile(`\.(?:Opt)?(?:String|Uint|Int|Bool|Float|Scalar|OptScalar|StringList|UintList|Has)\("([a-z_0-9]+)"`)
	litRe := regexp.MustCompile(`"([a-z0-9_+\-*/<>=!&|^%.]{1,16})"`)
	seenK, seenV := map[string]bool{}, map[string]bool{}
	for _, glob := range []string{"*.go", "../ops/*.go", "../strs/*.go"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, m := range argRe.FindAllSubmatch(src, -1) {
				if k := string(m[1]); !seenK[k] {
					seenK[k] = true
					keys = append(keys, k)
				}
			}
			for _, m := range litRe.FindAllSubmatch(src, -1) {
				if v := string(m[1]); !seenV[v] {
					seenV[v] = true
					values = append(values, v)
				}
			}
		}
	}
	if len(keys) < 20 {
		f.Fatalf("found only %d argument names in the source", len(keys))
	}
	slices.Sort(keys)
	return keys, values
}

// reset deletes every array but the base ones and puts back any base array
// a request deleted or wrote into.
func (fz *fuzzServer) reset(t testing.TB) {
	var extra []string
	for _, info := range fz.s.store.list() {
		if _, ok := fz.base[info.name]; !ok {
			extra = append(extra, info.name)
		}
	}
	if len(extra) > 0 {
		if _, _, err := fz.s.store.delete(extra, true); err != nil {
			t.Fatal(err)
		}
	}
	for name, a := range fz.base {
		if got, err := fz.s.store.get(name); err == nil && string(got.Bytes()) == string(a.Bytes()) && got.DType() == a.DType() {
			continue
		}
		fz.s.store.delete([]string{name}, true)
		c, err := pdarray.Alloc(a.DType(), a.Len())
		if err != nil {
			t.Fatal(err)
		}
		copy(c.Bytes(), a.Bytes())
		if err := fz.s.store.reserve(int64(c.NBytes()), "fuzz base"); err != nil {
			t.Fatal(err)
		}
		if _, err := fz.s.store.put(name, c); err != nil {
			t.Fatal(err)
		}
	}
}

// request builds a command and its arguments from data: the first byte
// picks the command, then each pair of bytes a key (one the command takes)
// and its value (a byte with its top bit set makes the value a list of the
// next one to four).
func (fz *fuzzServer) request(data []byte) (string, map[string]any) {
	if len(data) == 0 {
		return fz.cmds[0], map[string]any{}
	}
	cmd := fz.cmds[int(data[0]&0x7f)%len(fz.cmds)]
	args := map[string]any{}
	next := func(i *int) (byte, bool) {
		if *i >= len(data) {
			return 0, false
		}
		*i++
		return data[*i-1], true
	}
	// A value's byte: bits 4-6 pick its kind (three in eight an array's
	// name), the low four bits (and the key's byte) which one.
	var mix byte
	value := func(b byte) any {
		pick := func(vs []any) any { return vs[(int(b&15)+int(mix)*16)%len(vs)] }
		switch (b >> 4) & 7 {
		case 0, 1, 2:
			return pick(fz.names)
		case 3, 4:
			return pick(fz.numbers)
		case 5, 6:
			return pick(fz.strs)
		default:
			return pick(fz.others)
		}
	}
	keys := fz.cmdKeys[cmd]
	if len(keys) == 0 || data[0]&0x80 != 0 { // now and then any name (refused)
		keys = fz.keys
	}
	for i := 1; i < len(data); {
		kb, _ := next(&i)
		vb, ok := next(&i)
		if !ok {
			break
		}
		key := keys[int(kb)%len(keys)]
		mix = kb >> 4
		if vb&0x80 == 0 {
			args[key] = value(vb)
			continue
		}
		n := 1 + int(vb&3)
		var list []any
		for range n {
			b, ok := next(&i)
			if !ok {
				break
			}
			list = append(list, value(b))
		}
		args[key] = list
	}
	return cmd, args
}
