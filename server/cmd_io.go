package server

// Columnar files and checkpoints on the server (docs/protocol.md, "Files"):
// read_parquet, to_parquet, read_arrow, to_arrow_file, save_all, load_all.
//
// Paths come from clients and are confined to --data-dir: every file is
// opened through an os.Root on that directory, which refuses `..`,
// absolute paths elsewhere and symlinks that resolve outside it. Files are
// written atomically: into a temporary file in the same directory, synced,
// then renamed over the final name, so a crash never leaves a half-written
// file under that name.

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arktos-dev/arktos/arrowio"
	"github.com/arktos-dev/arktos/internal/par"
	"github.com/arktos-dev/arktos/ops"
	"github.com/arktos-dev/arktos/pdarray"
	"github.com/arktos-dev/arktos/strs"
	"github.com/arktos-dev/arktos/transfer"
)

// DefaultDataDir is where client paths resolve when --data-dir is not given.
const DefaultDataDir = "arktos-data"

var dataRootMu sync.Mutex

// dataRoot opens (creating it if needed) the data directory as an os.Root.
func (s *Server) dataRoot() (*os.Root, string, error) {
	dir := s.cfg.DataDir
	if dir == "" {
		dir = DefaultDataDir
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", transfer.Errorf(transfer.Internal, "data directory %s: %v", dir, err)
	}
	dataRootMu.Lock()
	defer dataRootMu.Unlock()
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, "", transfer.Errorf(transfer.Internal, "cannot create the data directory %s: %v (set --data-dir)", abs, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, "", transfer.Errorf(transfer.Internal, "cannot open the data directory %s: %v (set --data-dir)", abs, err)
	}
	return root, abs, nil
}

// relPath turns a client path into a clean slash path relative to the data
// directory abs, refusing anything that would leave it.
// dataPath opens the data directory and resolves p inside it. The caller
// closes root.
func (s *Server) dataPath(p string) (root *os.Root, abs, rel string, err error) {
	root, abs, err = s.dataRoot()
	if err != nil {
		return nil, "", "", err
	}
	if rel, err = relPath(abs, p); err != nil {
		root.Close()
		return nil, "", "", err
	}
	return root, abs, rel, nil
}

func relPath(abs, p string) (string, error) {
	if p == "" {
		return "", transfer.Errorf(transfer.ArgumentValue, "the path is empty; give a path under the server's data directory %s", abs)
	}
	if strings.ContainsRune(p, 0) {
		return "", transfer.Errorf(transfer.ArgumentValue, "path %q holds a NUL byte", p)
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(abs, rel)
		if real, rerr := filepath.EvalSymlinks(abs); err == nil && strings.HasPrefix(r, "..") && rerr == nil {
			r, err = filepath.Rel(real, rel)
		}
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", errEscape(p, abs)
		}
		rel = r
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errEscape(p, abs)
	}
	return filepath.ToSlash(rel), nil
}

func errEscape(p, abs string) error {
	return transfer.Errorf(transfer.ArgumentValue, "path %q is outside the server's data directory %s; paths are relative to it (set --data-dir to serve another folder)", p, abs)
}

// openFile opens rel under root (p as the client named it) to read it. A
// directory is refused: opening one succeeds, and reading it failed later
// as INTERNAL.
func openFile(root *os.Root, rel, p, abs string) (*os.File, error) {
	fh, err := root.Open(rel)
	if err != nil {
		return nil, fileErr(p, abs, err)
	}
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		fh.Close()
		return nil, transfer.Errorf(transfer.ArgumentValue, "%q in the server's data directory %s is a directory; name a file", p, abs)
	}
	return fh, nil
}

// fileErr turns an os error on a client path into a registry error.
func fileErr(p, abs string, err error) error {
	if err == nil {
		return nil
	}
	var te *transfer.Error
	if errors.As(err, &te) {
		return te
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "escapes from parent") || strings.Contains(msg, "path escapes"):
		return transfer.Errorf(transfer.ArgumentValue, "path %q leads outside the server's data directory %s, or through an absolute symlink (only relative symlinks that stay inside are followed); it is refused", p, abs)
	case errors.Is(err, fs.ErrNotExist):
		return transfer.Errorf(transfer.ArgumentValue, "no file %q in the server's data directory %s", p, abs)
	case errors.Is(err, fs.ErrPermission):
		return transfer.Errorf(transfer.ArgumentValue, "permission denied on %q in the server's data directory %s", p, abs)
	case errors.Is(err, syscall.ENOTDIR):
		return transfer.Errorf(transfer.ArgumentValue, "%q in the server's data directory %s: a part of it is a file, not a directory (%v)", p, abs, err)
	case errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.EEXIST): // (os.Rename onto a directory: EEXIST)
		return transfer.Errorf(transfer.ArgumentValue, "%q in the server's data directory %s is a directory; name a file", p, abs)
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ELOOP):
		return transfer.Errorf(transfer.ArgumentValue, "%q in the server's data directory %s: %v", p, abs, err)
	}
	return transfer.Errorf(transfer.Internal, "%s: %v", p, err)
}

// ioErr maps an arrowio error to the registry. A worker's panic that came
// back as an error (par.Catch) is raised again, for runRecovered to log
// and answer as INTERNAL.
func ioErr(err error) error {
	var wp *par.Panic
	if errors.As(err, &wp) {
		panic(wp)
	}
	var ae *arrowio.Error
	if !errors.As(err, &ae) {
		var te *transfer.Error
		if errors.As(err, &te) {
			return te
		}
		return transfer.Errorf(transfer.Internal, "%v", err)
	}
	code := map[arrowio.ErrKind]transfer.Code{arrowio.ErrValue: transfer.ArgumentValue, arrowio.ErrType: transfer.UnsupportedDType,
		arrowio.ErrData: transfer.InvalidData, arrowio.ErrIO: transfer.Internal, arrowio.ErrMemory: transfer.OutOfMemory}[ae.Kind]
	return transfer.Errorf(code, "%s", ae.Msg)
}

// optStringList reads an optional list of strings (nil when absent).
func optStringList(a *transfer.Args, key string) []string {
	if !a.Has(key) {
		a.OptString(key, "") // mark it read
		return nil
	}
	return a.StringList(key)
}

// pathsArg reads "path" (one string) or "paths" (a list).
func pathsArg(a *transfer.Args) []string {
	if a.Has("paths") {
		return a.StringList("paths")
	}
	return []string{a.String("path")}
}

// nullPolicyArg reads nulls? and fill_value?.
func nullPolicyArg(a *transfer.Args) arrowio.NullPolicy {
	p := arrowio.NullPolicy{Mode: a.OptString("nulls", "auto")}
	if a.Has("null_string") {
		ns := a.OptString("null_string", "")
		p.NullString = &ns
	}
	if v, ok := a.OptScalar("fill_value"); ok {
		switch x := v.(type) {
		case bool, float64:
			p.Fill = x
		case float32:
			p.Fill = float64(x)
		default:
			if i, ok := transfer.AsInt(v); ok {
				p.Fill = i
			} else if u, ok := asUint64(v); ok {
				p.Fill = u
			}
		}
	}
	return p
}

func asUint64(v any) (uint64, bool) {
	if x, ok := v.(uint64); ok {
		return x, true
	}
	return 0, false
}

// expandPaths resolves client paths and glob patterns to sorted, unique
// slash paths under the data directory.
func expandPaths(root *os.Root, abs string, paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		rel, err := relPath(abs, p)
		if err != nil {
			return nil, err
		}
		var matches []string
		if strings.ContainsAny(rel, "*?[") {
			matches, err = fs.Glob(root.FS(), rel)
			if err != nil {
				return nil, transfer.Errorf(transfer.ArgumentValue, "bad glob pattern %q: %v", p, err)
			}
			if len(matches) == 0 {
				return nil, transfer.Errorf(transfer.ArgumentValue, "no file matches %q in the server's data directory %s", p, abs)
			}
			sort.Strings(matches)
		} else {
			matches = []string{rel}
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// planReader is a planned read of columns (Parquet or Arrow IPC).
type planReader interface {
	Read(dst, masks []*pdarray.Array, workers int) (arrowio.ReadReport, error)
}

// storeRead reserves and allocates every output of a plan, runs it and
// stores the results under fresh names: all of them, or none.
// A cancel (stop) ends the read with nothing stored; once the read is done
// it no longer can.
func (s *Server) storeRead(what string, cols []arrowio.PlanColumn, plan planReader, fill any, start time.Time, extra map[string]any, stop *par.Stop) (*response, error) {
	for _, pc := range cols {
		if err := arrowio.CheckFill(fill, pc.DType); err != nil {
			return nil, ioErr(err)
		}
	}
	// Sizes come from the file's metadata: added without overflow (a file
	// may claim 2^47 rows in each of 65,536 columns).
	var total int64
	for _, pc := range cols {
		nb, err := pc.DType.NBytes(uint64(pc.Rows))
		if err != nil || pc.Rows < 0 {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%s: column '%s' of %d rows: too large to read", what, pc.Name, pc.Rows)
		}
		if total, err = s.store.addWithin(total, int64(nb), what); err != nil {
			return nil, err
		}
		if pc.Mask {
			if total, err = s.store.addWithin(total, int64(pc.Rows), what); err != nil {
				return nil, err
			}
		}
	}
	if err := s.store.reserve(total, fmt.Sprintf("%s (%d columns of %d rows)", what, len(cols), firstRows(cols))); err != nil {
		return nil, err
	}
	var stored []string
	var storedBytes int64 // bytes of stored arrays: deleting them gives those back
	ok := false
	defer func() {
		if !ok {
			s.store.delete(stored, true)
			s.store.release(total - storedBytes)
		}
	}()
	cpu0, faults0 := processUsage()
	dst := make([]*pdarray.Array, len(cols))
	masks := make([]*pdarray.Array, len(cols))
	for i, pc := range cols {
		var err error
		// Every element (and mask byte) is written by the read.
		if dst[i], err = s.store.allocMayBeDirty(pc.DType, pc.Rows); err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
		if pc.Mask {
			if masks[i], err = s.store.allocMayBeDirty(pdarray.Bool, pc.Rows); err != nil {
				return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
			}
		}
	}
	decodeStart := time.Now()
	rep, err := plan.Read(dst, masks, s.cfg.Workers)
	if err == nil && !stop.Disarm() {
		err = stop.Err()
	}
	if err != nil {
		if _, ok := par.AsCanceled(err); ok {
			return nil, err
		}
		return nil, ioErr(err)
	}
	decode := time.Since(decodeStart)
	arrays := make([]any, 0, 2*len(cols))
	nulls := map[string]any{}
	var bytesOut int64
	for i, pc := range cols {
		name, err := s.store.put("", dst[i])
		if err != nil {
			return nil, err
		}
		stored = append(stored, name)
		storedBytes += int64(dst[i].NBytes())
		info := arrayResult(name, dst[i])
		info["column"] = pc.Name
		arrays = append(arrays, info)
		bytesOut += int64(dst[i].NBytes())
		nulls[pc.Name] = rep.Nulls[i]
		if pc.Mask {
			mname, err := s.store.put("", masks[i])
			if err != nil {
				return nil, err
			}
			stored = append(stored, mname)
			storedBytes += int64(masks[i].NBytes())
			info := arrayResult(mname, masks[i])
			info["column"] = pc.Name + "_mask"
			arrays = append(arrays, info)
		}
	}
	ok = true
	cpu1, faults1 := processUsage()
	res := map[string]any{"arrays": arrays, "nulls": nulls, "rows": firstRows(cols), "bytes": bytesOut,
		"seconds": time.Since(start).Seconds(), "decode_seconds": decode.Seconds(),
		"cpu_seconds": (cpu1 - cpu0).Seconds(), "page_faults": faults1 - faults0}
	for k, v := range extra {
		res[k] = v
	}
	return &response{result: res}, nil
}

// processUsage returns the server process's CPU time (user + system, all
// threads) and minor page faults so far. A read reports the difference
// over its allocation and decoding: on a busy machine its CPU seconds
// vary less than its wall seconds, and its faults count fresh memory
// (outputs or buffers that were not reused).
func processUsage() (time.Duration, int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Minflt)
}

func firstRows(cols []arrowio.PlanColumn) int {
	if len(cols) == 0 {
		return 0
	}
	return cols[0].Rows
}

func (s *Server) cmdReadParquet(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	paths := pathsArg(a)
	columns := optStringList(a, "columns")
	policy := nullPolicyArg(a)
	stringsAs := a.OptString("strings", "categorical")
	if err := a.Done(); err != nil {
		return nil, err
	}
	if stringsAs != "categorical" && stringsAs != "strings" {
		return nil, transfer.Errorf(transfer.ArgumentValue, "read_parquet: strings '%s' is not categorical (codes and sorted categories) or strings (offsets and bytes)", stringsAs)
	}
	root, abs, err := s.dataRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	files, err := expandPaths(root, abs, paths)
	if err != nil {
		return nil, err
	}
	srcs := make([]arrowio.ParquetSource, len(files))
	for i, f := range files {
		fh, err := openFile(root, f, f, abs)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		srcs[i] = arrowio.ParquetSource{Name: f, R: fh}
	}
	plan, err := arrowio.OpenParquet(srcs, columns, policy)
	if err != nil {
		return nil, ioErr(err)
	}
	defer plan.Close()
	what := fmt.Sprintf("read_parquet of %d file(s)", len(files))
	// The workers' column-chunk buffers grow with the files' row groups.
	why := what + " (the workers' buffers for a column chunk each, and the chunks read ahead: smaller row groups need less)"
	workers := max(1, min(s.cfg.Workers, plan.Units()))
	scratch, err := s.store.mulWithin(plan.WorkerScratch(), int64(workers), why)
	if err != nil {
		return nil, err
	}
	ahead, err := s.store.mulWithin(plan.AheadChunk(workers), int64(workers+1), why)
	if err != nil {
		return nil, err
	}
	if scratch, err = s.store.addWithin(scratch, ahead, why); err != nil {
		return nil, err
	}
	if err := s.store.reserve(scratch, why); err != nil {
		return nil, err
	}
	defer s.store.release(scratch)
	var sr stringReader = plan
	if stringsAs == "strings" {
		sr = rawStrings{plan}
	}
	plan.Stop = r.stop // a cancel stops the read between column chunks
	return s.storeReadAll(what, sr, plan.Strings, plan.Rows, plan.Columns, plan, policy.Fill, start, map[string]any{"files": files}, r.stop)
}

// storeReadAll reads a plan's string columns, then the others, and
// stores them all: the strings first, into arrays not yet stored, so a
// failure of either read stores nothing.
func (s *Server) storeReadAll(what string, sr stringReader, strCols []arrowio.StringColumn, rows int, cols []arrowio.PlanColumn, plan planReader, fill any, start time.Time, extra map[string]any, stop *par.Stop) (*response, error) {
	strs, err := s.readStringColumns(what, sr, strCols)
	if err != nil {
		return nil, err
	}
	defer strs.release()
	resp, err := s.storeRead(what, cols, plan, fill, start, extra, stop)
	if err != nil {
		return nil, err
	}
	if len(strs.cols) > 0 {
		resp.result["strings"] = strs.store()
		resp.result["rows"] = rows
	}
	return resp, nil
}

// readStrings holds a read's string columns until they are stored: each
// as its codes (int32), its sorted distinct strings' UTF-8 bytes (uint8)
// and their lengths (int64), the parts of a client's Categorical.
type readStrings struct {
	s        *Server
	cols     []readString
	reserved int64 // against --max-memory, until stored or released
}

type readString struct {
	column            string
	codes, cats, lens *pdarray.Array
	offs, data        *pdarray.Array // read as strings (rawStrings)
	ascii             bool
}

// rawStrings asks readStringColumns for a Parquet plan's string columns
// as Strings (offsets and bytes, read as they are) rather than codes.
type rawStrings struct{ p *arrowio.ParquetPlan }

func (r rawStrings) StringScratch(i int) int64 { return r.p.StringScratch(i) }
func (r rawStrings) ReadStrings(i int, codes []int32, workers int) ([]string, error) {
	return r.p.ReadStrings(i, codes, workers)
}

// readRaw reads string column i as offsets and bytes, reserving the
// offsets first and the bytes as the units decode them, and checks the
// text (strs.View) before it is kept.
func (rs *readStrings) readRaw(what string, p *arrowio.ParquetPlan, i int, sc arrowio.StringColumn) error {
	s := rs.s
	why := fmt.Sprintf("%s: string column '%s' (8 bytes a row for its offsets, and its bytes)", what, sc.Name)
	need := 8 * int64(sc.Rows+1)
	if err := s.store.reserve(need, why); err != nil {
		return err
	}
	rs.reserved += need
	offs, err := s.store.allocMayBeDirty(pdarray.Int64, sc.Rows+1) // every offset is written
	if err != nil {
		return transfer.Errorf(transfer.ArgumentValue, "%v", err)
	}
	var data *pdarray.Array
	alloc := func(n int) ([]byte, error) {
		var err error
		if data, err = s.store.allocMayBeDirty(pdarray.Uint8, n); err != nil { // written whole
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
		return data.Bytes(), nil
	}
	reserve := func(n int64) error {
		if err := s.store.reserve(n, why); err != nil {
			return err
		}
		rs.reserved += n
		return nil
	}
	if _, err := p.ReadStringsRaw(i, pdarray.View[int64](offs), alloc, reserve, s.cfg.Workers); err != nil {
		return ioErr(err)
	}
	v, err := strs.View(ops.PlainEnv(s.cfg.Workers), offs, data)
	if err != nil {
		return transfer.Errorf(transfer.ArgumentValue, "%s: string column '%s': %v", what, sc.Name, opErr(err))
	}
	rs.cols = append(rs.cols, readString{column: sc.Name, offs: offs, data: data, ascii: v.ASCII})
	return nil
}

// stringReader is a read plan's string columns (Parquet's, Arrow IPC's).
type stringReader interface {
	StringScratch(i int) int64
	ReadStrings(i int, codes []int32, workers int) ([]string, error)
}

// readStringColumns reads every string column of the plan. Each reserves
// its codes and StringScratch (the distinct strings held while they are
// merged) first, so a column too large for the room left is refused
// before it is read.
func (s *Server) readStringColumns(what string, plan stringReader, strs []arrowio.StringColumn) (_ *readStrings, err error) {
	rs := &readStrings{s: s}
	defer func() {
		if err != nil {
			rs.release()
		}
	}()
	raw, isRaw := plan.(rawStrings)
	for i, sc := range strs {
		if isRaw {
			if err := rs.readRaw(what, raw.p, i, sc); err != nil {
				return nil, err
			}
			continue
		}
		why := fmt.Sprintf("%s: string column '%s' (4 bytes a row for its codes, and its distinct strings)", what, sc.Name)
		need, err := s.store.addWithin(4*int64(sc.Rows), plan.StringScratch(i), why)
		if err != nil {
			return nil, err
		}
		if err := s.store.reserve(need, why); err != nil {
			return nil, err
		}
		rs.reserved += need
		codes, err := s.store.allocMayBeDirty(pdarray.Int32, sc.Rows) // every code is written
		if err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
		cats, err := plan.ReadStrings(i, pdarray.View[int32](codes), s.cfg.Workers)
		if err != nil {
			return nil, ioErr(err)
		}
		nb := 0
		for _, c := range cats {
			nb += len(c)
		}
		// Within the reservation: the strings' bytes are at most the
		// chunks' uncompressed bytes, and a length takes 8 of its 112 a
		// row; a file whose metadata says less reserves the rest here.
		if stored := 4*int64(sc.Rows) + int64(nb) + 8*int64(len(cats)); stored > need {
			if err := s.store.reserve(stored-need, why); err != nil {
				return nil, err
			}
			rs.reserved += stored - need
		}
		data, err := s.store.allocMayBeDirty(pdarray.Uint8, nb) // written whole below
		if err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
		lens, err := s.store.allocMayBeDirty(pdarray.Int64, len(cats))
		if err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
		b, l := pdarray.View[uint8](data)[:0], pdarray.View[int64](lens)
		for j, c := range cats {
			b = append(b, c...)
			l[j] = int64(len(c))
		}
		rs.cols = append(rs.cols, readString{column: sc.Name, codes: narrowCodes(s, codes, len(cats)), cats: data, lens: lens})
	}
	return rs, nil
}

// narrowCodes gives codes in the smallest signed dtype that numbers n
// strings, as a client's Categorical has them (int8 up to 127: a quarter
// of the memory, and of the bytes a group-by reads); the int32 array when
// no narrower one holds them or none can be had.
func narrowCodes(s *Server, codes *pdarray.Array, n int) *pdarray.Array {
	c := pdarray.View[int32](codes)
	switch {
	case n <= math.MaxInt8:
		if out, err := s.store.allocMayBeDirty(pdarray.Int8, len(c)); err == nil {
			narrow(pdarray.View[int8](out), c)
			return out
		}
	case n <= math.MaxInt16:
		if out, err := s.store.allocMayBeDirty(pdarray.Int16, len(c)); err == nil {
			narrow(pdarray.View[int16](out), c)
			return out
		}
	}
	return codes
}

func narrow[T int8 | int16](dst []T, src []int32) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = T(v)
	}
}

// store puts the columns' arrays in the store under fresh names (their
// bytes taken from the reservation; the rest is released) and describes
// them for the reply.
func (rs *readStrings) store() []any {
	out := make([]any, 0, len(rs.cols))
	for _, c := range rs.cols {
		entry := map[string]any{"column": c.column}
		arrays := map[string]*pdarray.Array{"codes": c.codes, "categories": c.cats, "category_lengths": c.lens}
		if c.offs != nil {
			arrays = map[string]*pdarray.Array{"offsets": c.offs, "bytes": c.data}
		}
		names := map[string]string{}
		for key, a := range arrays {
			name, _ := rs.s.store.put("", a) // a fresh name: never taken; its bytes reserved
			rs.reserved -= int64(a.NBytes())
			entry[key] = arrayResult(name, a)
			names[key] = name
		}
		if c.offs != nil { // checked as it was read: its first command need not check again
			rs.s.strs.remember([2]string{names["offsets"], names["bytes"]}, c.offs, c.data, c.ascii, rs.s.store)
		}
		out = append(out, entry)
	}
	rs.cols = nil
	return out
}

// release gives back what was reserved and not stored.
func (rs *readStrings) release() {
	if rs.reserved > 0 {
		rs.s.store.release(rs.reserved)
		rs.reserved = 0
	}
}

func (s *Server) cmdReadArrow(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	p := a.String("path")
	columns := optStringList(a, "columns")
	policy := nullPolicyArg(a)
	if err := a.Done(); err != nil {
		return nil, err
	}
	root, abs, rel, err := s.dataPath(p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fh, err := openFile(root, rel, p, abs)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// Opening loads every record batch, all its columns, into memory, held
	// until copied: the file's size is reserved first (the batches of an
	// uncompressed file take no more), then what they really hold if more
	// (compressed batches), so a file larger than the server's room is
	// refused before it is read.
	held := int64(0)
	if st, err := fh.Stat(); err == nil {
		held = st.Size()
	}
	what := fmt.Sprintf("read_arrow of %s (record batches held while copying)", rel)
	if err := s.store.reserve(held, what); err != nil {
		return nil, err
	}
	defer func() { s.store.release(held) }()
	// The batches may take the room left (they are reserved below): a
	// damaged compressed buffer's claimed size is refused, not allocated.
	room := int64(0) // (no limit: none)
	if used, limit, _, _ := s.store.usage(); limit > 0 {
		room = max(limit-used+held, 1) // (held, reserved above, is theirs)
	}
	plan, err := arrowio.OpenArrowIPC(rel, fh, columns, policy, room)
	if err != nil {
		return nil, ioErr(err)
	}
	defer plan.Close()
	if extra := plan.ScratchBytes - held; extra > 0 {
		if err := s.store.reserve(extra, what); err != nil {
			return nil, err
		}
		held += extra
	}
	return s.storeReadAll("read_arrow of "+rel, plan, plan.Strings, plan.Rows, plan.Columns, plan, policy.Fill, start, map[string]any{"files": []string{rel}}, nil)
}

// writeColumnsArgs reads names (stored arrays) and columns (their names in
// the file; default the array names), acquires the arrays and returns a
// release func.
func (s *Server) writeColumnsArgs(a *transfer.Args) ([]arrowio.Column, func(), error) {
	names := a.StringList("names")
	columns := optStringList(a, "columns")
	if columns == nil {
		columns = names
	}
	if len(columns) != len(names) {
		return nil, nil, transfer.Errorf(transfer.ArgumentValue, "columns has %d entries for %d arrays; give one column name per array", len(columns), len(names))
	}
	var releases []func()
	release := func() {
		for _, r := range releases {
			r()
		}
	}
	// A string column (a client's Categorical): its codes in names, its
	// categories' UTF-8 bytes and lengths in categories and
	// category_lengths, "" for the other columns.
	catNames, lenNames := optStringList(a, "categories"), optStringList(a, "category_lengths")
	var nullString *string // rows of this category are written as nulls
	if a.Has("null_string") {
		ns := a.OptString("null_string", "")
		nullString = &ns
	}
	if (catNames == nil) != (lenNames == nil) || catNames != nil && (len(catNames) != len(names) || len(lenNames) != len(names)) {
		return nil, nil, transfer.Errorf(transfer.ArgumentValue, "categories and category_lengths go together, one entry per array (\"\" for a column that is not strings); got %d and %d for %d arrays", len(catNames), len(lenNames), len(names))
	}
	cols := make([]arrowio.Column, len(names))
	acquire := func(n string) (*pdarray.Array, error) {
		arr, rel, err := s.store.acquire(n)
		if err == nil {
			releases = append(releases, rel)
		}
		return arr, err
	}
	reserve := func(n int64, why string) error { // held, as the arrays are, until release
		err := s.store.reserve(n, why)
		if err == nil {
			releases = append(releases, func() { s.store.release(n) })
		}
		return err
	}
	for i, n := range names {
		arr, err := acquire(n)
		if err != nil {
			release()
			return nil, nil, err
		}
		cols[i] = arrowio.Column{Name: columns[i], A: arr}
		if catNames == nil || catNames[i] == "" && lenNames[i] == "" {
			continue
		}
		cats, err := s.categoriesArg(columns[i], catNames[i], lenNames[i], acquire, reserve)
		if err != nil {
			release()
			return nil, nil, err
		}
		if nullString != nil {
			cats.Null = cats.Find(*nullString)
		}
		cols[i].Cats = cats
	}
	return cols, release, nil
}

// categoriesArg gives a string column's categories from the arrays of
// their bytes (uint8) and lengths (int64); the offsets are made here (8
// bytes a category, reserved first and held while the file is written).
func (s *Server) categoriesArg(column, data, lengths string, acquire func(string) (*pdarray.Array, error), reserve func(int64, string) error) (*arrowio.Categories, error) {
	if data == "" || lengths == "" {
		return nil, transfer.Errorf(transfer.ArgumentValue, "column %q: give both its categories and category_lengths, or neither", column)
	}
	d, err := acquire(data)
	if err != nil {
		return nil, err
	}
	l, err := acquire(lengths)
	if err != nil {
		return nil, err
	}
	if d.DType() != pdarray.Uint8 || l.DType() != pdarray.Int64 {
		return nil, transfer.Errorf(transfer.ArgumentType, "column %q: categories must be uint8 (UTF-8 bytes) and category_lengths int64, got %s and %s", column, d.DType(), l.DType())
	}
	if err := reserve(8*int64(l.Len()+1), fmt.Sprintf("column %q's category offsets (8 bytes a category)", column)); err != nil {
		return nil, err
	}
	offs := make([]int64, l.Len()+1)
	for i, n := range pdarray.View[int64](l) {
		if n < 0 {
			return nil, transfer.Errorf(transfer.ArgumentValue, "column %q: category %d has length %d; lengths are not negative", column, i, n)
		}
		offs[i+1] = offs[i] + n
	}
	if offs[len(offs)-1] != int64(d.Len()) {
		return nil, transfer.Errorf(transfer.ArgumentValue, "column %q: category_lengths add up to %d bytes, categories hold %d", column, offs[len(offs)-1], d.Len())
	}
	return &arrowio.Categories{Bytes: pdarray.View[uint8](d), Offsets: offs}, nil
}

func (s *Server) cmdToParquet(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	p := a.String("path")
	opts := arrowio.ParquetWriteOptions{
		Compression:      a.OptString("compression", "zstd"),
		CompressionLevel: int(a.OptInt("compression_level", 0)),
		RowGroupSize:     int(a.OptUint("row_group_size", arrowio.DefaultRowGroupSize)),
		Dictionary:       a.OptString("dictionary", "auto"),
		Workers:          s.cfg.Workers,
	}
	cols, release, err := s.writeColumnsArgs(a)
	if err != nil {
		a.Done()
		return nil, err
	}
	defer release()
	if err := a.Done(); err != nil {
		return nil, err
	}
	// The encoded row groups in flight grow with row_group_size, which the
	// client picks: counted while the file is written.
	scratch := arrowio.ParquetWriteScratch(cols, opts)
	if err := s.store.reserve(scratch, fmt.Sprintf("to_parquet of %d columns in row groups of %d rows (encoded row groups in flight; a smaller row_group_size needs less)", len(cols), opts.RowGroupSize)); err != nil {
		return nil, err
	}
	defer s.store.release(scratch)
	return s.writeFile(p, start, cols, func(w io.Writer) error { return arrowio.WriteParquet(w, cols, opts) })
}

func (s *Server) cmdToArrowFile(r *request) (*response, error) {
	start := time.Now()
	a := r.args
	p := a.String("path")
	opts := arrowio.IPCWriteOptions{Compression: a.OptString("compression", "none"), Workers: s.cfg.Workers}
	cols, release, err := s.writeColumnsArgs(a)
	if err != nil {
		a.Done()
		return nil, err
	}
	defer release()
	if err := a.Done(); err != nil {
		return nil, err
	}
	var scratch int64 // a string column's dictionary offsets, 4 bytes a category
	for _, c := range cols {
		if c.Cats != nil {
			scratch += 4 * int64(len(c.Cats.Offsets))
		}
	}
	if err := s.store.reserve(scratch, "to_arrow_file's string columns (4 bytes a category)"); err != nil {
		return nil, err
	}
	defer s.store.release(scratch)
	return s.writeFile(p, start, cols, func(w io.Writer) error { return arrowio.WriteArrowIPC(w, cols, opts) })
}

func (s *Server) writeFile(p string, start time.Time, cols []arrowio.Column, write func(io.Writer) error) (*response, error) {
	root, abs, rel, err := s.dataPath(p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	n, err := writeAtomic(root, rel, write)
	if err != nil {
		return nil, fileOrIOErr(p, abs, err)
	}
	var nbytes int64
	for _, c := range cols {
		nbytes += int64(c.A.NBytes())
	}
	return &response{result: map[string]any{"path": rel, "file_bytes": n, "bytes": nbytes, "rows": cols[0].A.Len(),
		"seconds": time.Since(start).Seconds()}}, nil
}

func fileOrIOErr(p, abs string, err error) error {
	var ae *arrowio.Error
	if errors.As(err, &ae) {
		return ioErr(err)
	}
	return fileErr(p, abs, err)
}

func tempSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeAtomic writes rel (a slash path under root) through write into a
// temporary file beside it, syncs it and renames it over rel.
func writeAtomic(root *os.Root, rel string, write func(io.Writer) error) (int64, error) {
	var n int64
	_, err := writeAtomicFile(root, rel, func(f *os.File) error {
		bw := bufio.NewWriterSize(newWritebackFile(f), 4<<20)
		cw := &countingWriter{w: bw}
		if err := write(cw); err != nil {
			return err
		}
		n = cw.n
		return bw.Flush()
	})
	return n, err
}

// writeAtomicFile is writeAtomic for a writer of the file itself (HDF5's
// library writes where it likes): write fills f (opened read-write, empty),
// which is then synced and renamed over rel. It returns the file's size.
func writeAtomicFile(root *os.Root, rel string, write func(*os.File) error) (int64, error) {
	dir, base := path.Split(rel)
	if base == "" || base == "." {
		return 0, transfer.Errorf(transfer.ArgumentValue, "path %q names a directory; give a file name", rel)
	}
	if fi, err := root.Stat(rel); err == nil && fi.IsDir() {
		// (Refused before the bytes are written, not at the rename.)
		return 0, transfer.Errorf(transfer.ArgumentValue, "path %q is a directory; give a file name", rel)
	}
	if dir != "" {
		if err := root.MkdirAll(path.Clean(dir), 0o755); err != nil {
			if errors.Is(err, syscall.EEXIST) {
				// MkdirAll met a file where a directory goes: say that, not
				// EEXIST's "is a directory".
				err = &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
			}
			return 0, err
		}
	}
	tmp := path.Join(dir, "."+base+".tmp-"+tempSuffix())
	f, err := root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		done = true
		return 0, err
	}
	done = true
	return st.Size(), nil
}

// --- checkpoints ---------------------------------------------------------

func (s *Server) cmdSaveAll(r *request) (*response, error) {
	start := time.Now()
	p := r.args.String("path")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	root, abs, rel, err := s.dataPath(p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if rel == "." {
		return nil, transfer.Errorf(transfer.ArgumentValue, "save_all needs a directory below the data directory %s, not the data directory itself", abs)
	}
	st, _, err := s.saveAll(root, rel, nil)
	if err != nil {
		return nil, fileOrIOErr(p, abs, err)
	}
	return &response{result: map[string]any{"path": rel, "arrays": st.arrays, "bytes": st.bytes, "seconds": time.Since(start).Seconds()}}, nil
}

func (s *Server) cmdLoadAll(r *request) (*response, error) {
	start := time.Now()
	p := r.args.String("path")
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	root, abs, rel, err := s.dataPath(p)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	infos, err := s.loadAll(root, rel, p)
	if err != nil {
		return nil, fileOrIOErr(p, abs, err)
	}
	return &response{result: map[string]any{"path": rel, "arrays": infos, "seconds": time.Since(start).Seconds()}}, nil
}

// checkpointReplaceable says why saveAll may not replace rel (shown as
// shown): it swaps a new directory in and deletes the old one whole, so rel
// must be absent, an empty directory or a checkpoint (it holds
// manifest.json). A user's folder or file is refused, not deleted.
func checkpointReplaceable(root *os.Root, rel, shown string) error {
	fi, err := root.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return transfer.Errorf(transfer.ArgumentValue, "%s is a file, not a checkpoint directory, and a checkpoint would replace it: choose a new or empty directory, or delete the file first", shown)
	}
	if _, err := root.Stat(path.Join(rel, arrowio.ManifestName)); err == nil {
		return nil
	}
	d, err := root.Open(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Readdirnames(1); errors.Is(err, io.EOF) {
		return nil // empty
	}
	return transfer.Errorf(transfer.ArgumentValue, "%s holds files but no %s, so it is not a checkpoint, and a checkpoint replaces its directory whole (what was in it would be deleted): choose a new or empty directory", shown, arrowio.ManifestName)
}

// writebackChunk is how many bytes writebackFile lets pile up before it
// asks the kernel to start writing them out.
const writebackChunk = 8 << 20

// writebacksStarted counts sync_file_range calls (tests).
var writebacksStarted atomic.Uint64

// writebackFile writes to f and, after every writebackChunk bytes, starts
// the kernel writing them to disk (sync_file_range WRITE: it does not
// wait), so the fsync that ends a file write waits for the last few MiB
// instead of the whole file (it was ~10% of a Parquet write: 48 ms of
// 450 ms for bench/io's 5e6-row file). Advisory: its errors are ignored,
// the fsync reports any.
type writebackFile struct {
	f            *os.File
	fd           int
	off, started int64
}

func newWritebackFile(f *os.File) *writebackFile {
	return &writebackFile{f: f, fd: int(f.Fd())}
}

func (w *writebackFile) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		part := p[done:min(len(p), done+writebackChunk-int(w.off-w.started))]
		n, err := w.f.Write(part)
		done += n
		w.off += int64(n)
		if err != nil {
			return done, err
		}
		if w.off-w.started >= writebackChunk {
			unix.SyncFileRange(w.fd, w.started, w.off-w.started, unix.SYNC_FILE_RANGE_WRITE)
			writebacksStarted.Add(1)
			w.started = w.off
		}
	}
	return done, nil
}

func writeSynced(root *os.Root, name string, b []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := newWritebackFile(f).Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// loadAll reads the checkpoint rel under root and stores its arrays under
// their saved names: every checksum is verified before any array is
// stored, and a failure stores nothing.
func (s *Server) loadAll(root *os.Root, rel, shown string) ([]any, error) {
	m, err := readManifest(root, rel, shown)
	if err != nil {
		return nil, err
	}
	return s.loadManifest(root, rel, shown, m, nil)
}

// readManifest reads and parses the manifest of the checkpoint rel.
func readManifest(root *os.Root, rel, shown string) (*arrowio.Manifest, error) {
	mb, err := root.ReadFile(path.Join(rel, arrowio.ManifestName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%q is not a checkpoint: it has no %s (save one with save_all)", shown, arrowio.ManifestName)
		}
		return nil, err
	}
	m, err := arrowio.ParseManifest(mb)
	if err != nil {
		return nil, transfer.Errorf(transfer.InvalidData, "checkpoint %q: %v; nothing was loaded", shown, err.(*arrowio.Error).Msg)
	}
	return m, nil
}

// loadManifest is loadAll's work once m is read. st, when not nil, is the
// start-up restore's: it counts the arrays read, and a stop (shutdown)
// ends the reading between arrays (errRestoreStopped).
func (s *Server) loadManifest(root *os.Root, rel, shown string, m *arrowio.Manifest, st *restoreState) ([]any, error) {
	var err error
	var taken []string
	var total int64
	for _, e := range m.Arrays {
		if s.store.has(e.Name) {
			taken = append(taken, e.Name)
		}
		if total, err = s.store.addWithin(total, int64(e.NBytes), fmt.Sprintf("load_all of %q (%d arrays)", shown, len(m.Arrays))); err != nil {
			return nil, err
		}
	}
	if len(taken) > 0 {
		return nil, transfer.Errorf(transfer.NameInUse, "checkpoint %q holds arrays named %s, which already exist; delete them first; nothing was loaded", shown, strings.Join(taken, ", "))
	}
	if err := s.store.reserve(total, fmt.Sprintf("load_all of %q (%d arrays)", shown, len(m.Arrays))); err != nil {
		return nil, err
	}
	var stored []string
	var kept int64 // bytes of stored arrays: deleting them gives those back
	ok := false
	defer func() {
		if !ok {
			s.store.delete(stored, true)
			s.store.release(total - kept)
		}
	}()
	arrays := make([]*pdarray.Array, len(m.Arrays))
	errs := make([]error, len(m.Arrays))
	for i, e := range m.Arrays {
		d, _ := pdarray.ParseDType(e.DType)
		if arrays[i], err = s.store.allocMayBeDirty(d, e.Size); err != nil {
			return nil, transfer.Errorf(transfer.ArgumentValue, "%v", err)
		}
	}
	var next atomic.Int64
	var g par.Group // a worker's panic reaches runRecovered
	for w := 0; w < max(1, min(s.cfg.Workers, len(m.Arrays))); w++ {
		g.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(m.Arrays) {
					return
				}
				if st != nil && s.closing.Load() {
					errs[i] = errRestoreStopped
					continue
				}
				errs[i] = readCheckpointFile(root, rel, shown, m.Arrays[i], arrays[i])
				if st != nil && errs[i] == nil {
					st.arraysDone.Add(1)
					st.bytesDone.Add(int64(m.Arrays[i].NBytes))
				}
			}
		})
	}
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	infos := make([]any, len(m.Arrays))
	for i, e := range m.Arrays {
		if _, err := s.store.put(e.Name, arrays[i]); err != nil {
			return nil, err
		}
		stored = append(stored, e.Name)
		kept += int64(arrays[i].NBytes())
		infos[i] = arrayResult(e.Name, arrays[i])
	}
	ok = true
	return infos, nil
}

func readCheckpointFile(root *os.Root, rel, shown string, e arrowio.ManifestEntry, a *pdarray.Array) error {
	name := path.Join(rel, e.File)
	f, err := root.Open(name)
	if err != nil {
		return transfer.Errorf(transfer.InvalidData, "checkpoint %q: array '%s': cannot open %s: %v; nothing was loaded", shown, e.Name, e.File, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != int64(e.NBytes) {
		return transfer.Errorf(transfer.InvalidData, "checkpoint %q: array '%s': %s holds %d bytes, the manifest says %d; the checkpoint is damaged; nothing was loaded", shown, e.Name, e.File, st.Size(), e.NBytes)
	}
	if _, err := io.ReadFull(f, a.Bytes()); err != nil {
		return transfer.Errorf(transfer.InvalidData, "checkpoint %q: array '%s': reading %s: %v; nothing was loaded", shown, e.Name, e.File, err)
	}
	if got := arrowio.FormatChecksum(arrowio.Checksum(a.Bytes(), 1)); got != e.Checksum {
		return transfer.Errorf(transfer.InvalidData, "checkpoint %q: array '%s': %s has checksum %s but the manifest recorded %s: the file is corrupt; nothing was loaded", shown, e.Name, e.File, got, e.Checksum)
	}
	if a.DType() == pdarray.Bool {
		if i := pdarray.ValidateBools(a.Bytes()); i >= 0 {
			return transfer.Errorf(transfer.InvalidData, "checkpoint %q: array '%s': bool element %d is not 0 or 1; nothing was loaded", shown, e.Name, i)
		}
	}
	return nil
}

// checkpointRoot opens the parent of --checkpoint (an operator's path, not
// confined to the data directory) and returns the checkpoint's base name.
func (s *Server) checkpointRoot() (*os.Root, string, error) {
	abs, err := filepath.Abs(s.cfg.Checkpoint)
	if err != nil {
		return nil, "", err
	}
	parent, base := filepath.Split(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, "", err
	}
	return root, base, nil
}

// restoreState is the progress of the start-up restore of --checkpoint,
// which get_config reports ("restoring") and requests refused meanwhile
// quote.
type restoreState struct {
	m                     *arrowio.Manifest // read once, by prepareRestore
	start                 time.Time
	arrays, bytes         int64 // the manifest's
	arraysDone, bytesDone atomic.Int64
}

// errRestoreStopped ends a restore the server was stopped in.
var errRestoreStopped = errors.New("the server was stopped")

// refusal is the error a request other than get_config, stats and
// shutdown gets while the checkpoint is restored.
func (st *restoreState) refusal(cmd, checkpoint string) error {
	return transfer.Errorf(transfer.Restoring, "the server is restoring its checkpoint %s (%d of %d arrays, %.1f of %.1f GiB, for %.0f s); '%s' runs once it has: retry in a moment (clients wait for it when they connect)",
		checkpoint, st.arraysDone.Load(), st.arrays, float64(st.bytesDone.Load())/(1<<30), float64(st.bytes)/(1<<30), time.Since(st.start).Seconds(), cmd)
}

// progress is get_config's "restoring" map.
func (st *restoreState) progress() map[string]any {
	return map[string]any{
		"arrays": st.arrays, "arrays_done": st.arraysDone.Load(),
		"bytes": st.bytes, "bytes_done": st.bytesDone.Load(),
		"seconds": time.Since(st.start).Seconds(),
	}
}

// prepareRestore looks at --checkpoint at start-up: when it holds a
// checkpoint, the restore is pending (Run runs restoreCheckpoint while it
// serves) and until it succeeds nothing is saved over the checkpoint.
func (s *Server) prepareRestore() error {
	if s.cfg.Checkpoint == "" {
		return nil
	}
	root, base, err := s.checkpointRoot()
	if err != nil {
		return fmt.Errorf("server: --checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	defer root.Close()
	if err := s.recoverCheckpoint(root, base); err != nil {
		return fmt.Errorf("server: --checkpoint %s: cannot recover the checkpoint a crash left aside: %w", s.cfg.Checkpoint, err)
	}
	if _, err := root.Stat(path.Join(base, arrowio.ManifestName)); errors.Is(err, fs.ErrNotExist) {
		// Refused now, not at the shutdown that would have saved to it.
		if err := checkpointReplaceable(root, base, s.cfg.Checkpoint); err != nil {
			var te *transfer.Error
			if errors.As(err, &te) {
				return fmt.Errorf("server: --checkpoint: %s", te.Message) // (an operator's, not a client's)
			}
			return fmt.Errorf("server: --checkpoint %s: %w", s.cfg.Checkpoint, err)
		}
		s.log.Info("no checkpoint to restore yet", "checkpoint", s.cfg.Checkpoint)
		return nil
	}
	s.restorePending.Store(true) // from here on, never saved over
	m, err := readManifest(root, base, s.cfg.Checkpoint)
	if err != nil {
		return fmt.Errorf("server: cannot restore --checkpoint %s: %v (move it away to start without it)", s.cfg.Checkpoint, err)
	}
	st := &restoreState{m: m, start: time.Now(), arrays: int64(len(m.Arrays))}
	for _, e := range m.Arrays {
		st.bytes += int64(e.NBytes)
	}
	s.restore.Store(st)
	return nil
}

// restoreCheckpoint loads --checkpoint (prepareRestore found it). A
// damaged checkpoint stops the server: starting empty would overwrite it
// at the next clean shutdown. A stop during the restore ends it between
// arrays (nil: the checkpoint stays as it was, unsaved over).
func (s *Server) restoreCheckpoint(st *restoreState) error {
	root, base, err := s.checkpointRoot()
	if err != nil {
		return fmt.Errorf("server: --checkpoint %s: %w", s.cfg.Checkpoint, err)
	}
	defer root.Close()
	// ARKTOS_DEBUG_RESTORE_DELAY (a duration, for the clients' tests): the
	// restore waits that long first, so the server is seen restoring.
	if d, err := time.ParseDuration(os.Getenv("ARKTOS_DEBUG_RESTORE_DELAY")); err == nil && d > 0 {
		select {
		case <-time.After(d):
		case <-s.stopped:
		}
	}
	infos, err := s.loadManifest(root, base, s.cfg.Checkpoint, st.m, st)
	if errors.Is(err, errRestoreStopped) {
		s.log.Info("checkpoint restore stopped by a shutdown; the checkpoint stays as it was", "checkpoint", s.cfg.Checkpoint)
		return nil
	}
	if err != nil {
		return fmt.Errorf("server: cannot restore --checkpoint %s: %v (move it away to start without it)", s.cfg.Checkpoint, err)
	}
	s.seedLastCheckpoint(base, st.m) // (no request has run yet: the arrays are as read)
	s.restorePending.Store(false)
	s.restore.Store(nil)
	s.log.Info("restored checkpoint", "checkpoint", s.cfg.Checkpoint, "arrays", len(infos), "took", time.Since(st.start))
	return nil
}
