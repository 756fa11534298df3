package server

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// The command table: every command the server takes is declared here, once,
// with what the rest of the server and the clients need to know about it.
// Its handler lives in the file of its family (handlers.go, cmd_ops.go,
// cmd_groupby.go, cmd_io.go, shm.go) and decodes its arguments with
// transfer.Args, whose errors (ARGUMENT_MISSING, ARGUMENT_TYPE,
// ARGUMENT_VALUE, an unknown argument) read the same for every command.
// The commands command sends the table (commandsConfig; get_config says
// "command_table" where a server has it), read once at connect, so the Go
// and Python clients keep no copy of it; docs/protocol.md's tables are checked against it
// (TestProtocolDocListsCommands).
//
// Adding a command: a row in commandTable, its handler, a row in
// docs/protocol.md (docs/architecture.md, "Adding a command").

// command is one row of the table.
type command struct {
	run func(s *Server, r *request) (*response, error)
	// payload: the request carries payload frames (an upload's bytes).
	payload bool
	// inline commands are cheap and never block: the I/O goroutine runs
	// them itself and replies at once. They only read or change the
	// store's table under its mutex, which no one holds for long (never
	// during a transfer or a kernel), so their round trip is the ZeroMQ
	// floor plus the header codec, with no hand-off to a worker and back.
	inline bool
	// inlineSmall names the arguments (array names) of a command whose work
	// is linear in the arrays they name and whose reply is a scalar: on
	// arrays of inlineSmallBytes or less together the I/O goroutine runs
	// it itself (smallEnough). The work then costs a few µs, less than the
	// hand-off to a worker and back (two thread wake-ups, tens of µs), and
	// holds up other clients no longer than decoding a header does.
	inlineSmall []string
	// creates: the command stores new arrays under fresh names (its result
	// describes them), so a client deletes what a request it gave up on made
	// after all (get_config's "creating").
	creates bool
	// writes names the arguments whose arrays the command may change or
	// remove (an in-place "out", setitem's "a", delete's "names"); when
	// none of them is given, it changes no stored array. anyArray ("*"):
	// it may change any (load_all replaces what its names held). A client
	// that defers work on arrays (Python's lazy GroupBy) does it first.
	writes []string
	// lane: the command may come over a request lane (lane.go); without it,
	// only on the ZeroMQ socket (the ones that manage streams, lend
	// segments, or stop the server). lanePayload: with payload frames too,
	// in the request or the reply.
	lane, lanePayload bool
	// onStream: given a "stream" argument, its bytes go over a bulk stream
	// at the client's pace, so route runs it on a goroutine of its own
	// rather than hold a worker.
	onStream bool
	// detached: route runs it on a goroutine of its own, not a worker: it
	// waits on another server (locale_push), and a worker held waiting
	// could be the one that server's own push is waiting on.
	detached bool
	// whileRestoring: taken while --checkpoint's arrays are being restored
	// (the rest are refused until it is done).
	whileRestoring bool
	// dist says how the command spreads over several server processes,
	// each holding a part of every array's rows (issue 49's locales).
	dist distribution
}

// anyArray in command.writes: the command may change any stored array.
const anyArray = "*"

// distribution is how a command's work divides among server processes
// (locales) that each hold a block of every array's rows.
type distribution string

const (
	// distLocal: about this process or connection only (its config, its
	// streams and segments); nothing to divide.
	distLocal distribution = "local"
	// distEvery: each process does it to its own parts and the replies
	// are merged (delete, list, mem_used, save_all, shutdown).
	distEvery distribution = "every"
	// distElementwise: row i of the result comes from row i of the
	// operands: each process computes its block alone (operands aligned).
	distElementwise distribution = "elementwise"
	// distReduce: each process reduces its block; one combine merges the
	// partials (a sum of sums, a min of mins; a scan adds each block's
	// carry back).
	distReduce distribution = "reduce"
	// distExchange: rows move between processes (sorts, group-bys, set
	// operations, gathers by index, results of a length not known ahead).
	distExchange distribution = "exchange"
	// distGather: the rows come together at one place (a download, one
	// element).
	distGather distribution = "gather"
	// distScatter: rows coming in are divided among the processes (an
	// upload, a file read).
	distScatter distribution = "scatter"
)

// commandTable declares every command. It is a function, not a variable
// initializer, because handlers (get_config's) read the table: an
// initializer naming them would depend on itself.
func commandTable() map[string]command {
	ops := func(run func(*Server, *request) (*response, error), d distribution) command {
		return command{run: run, creates: true, lane: true, dist: d}
	}
	groupby := func(run func(*Server, *request) (*response, error)) command {
		return command{run: run, creates: true, lane: true, dist: distExchange}
	}
	return map[string]command{
		// Session, metadata and transfers (handlers.go, shm.go).
		"get_config":   {run: (*Server).cmdGetConfig, inline: true, lane: true, whileRestoring: true, dist: distLocal},
		"upload":       {run: (*Server).cmdUpload, payload: true, creates: true, writes: []string{"name"}, lane: true, lanePayload: true, onStream: true, dist: distScatter},
		"download":     {run: (*Server).cmdDownload, lane: true, lanePayload: true, onStream: true, dist: distGather},
		"noop":         {run: (*Server).cmdNoop, inline: true, lane: true, dist: distLocal},
		"commands":     {run: (*Server).cmdCommands, inline: true, lane: true, whileRestoring: true, dist: distLocal},
		"info":         {run: (*Server).cmdInfo, inline: true, lane: true, dist: distEvery},
		"list":         {run: (*Server).cmdList, inline: true, lane: true, dist: distEvery},
		"delete":       {run: (*Server).cmdDelete, inline: true, writes: []string{"names"}, lane: true, dist: distEvery},
		"rename":       {run: (*Server).cmdRename, inline: true, writes: []string{"name", "new_name"}, lane: true, dist: distEvery},
		"mem_used":     {run: (*Server).cmdMemUsed, inline: true, lane: true, dist: distEvery},
		"stats":        {run: (*Server).cmdStats, inline: true, lane: true, whileRestoring: true, dist: distEvery},
		"cancel":       {run: (*Server).cmdCancel, inline: true, whileRestoring: true, dist: distEvery},
		"shutdown":     {run: (*Server).cmdShutdown, whileRestoring: true, dist: distEvery},
		"open_stream":  {run: (*Server).cmdOpenStream, dist: distLocal},
		"close_stream": {run: (*Server).cmdCloseStream, dist: distLocal},
		"shm_lease":    {run: (*Server).cmdShmLease, dist: distLocal},
		"shm_release":  {run: (*Server).cmdShmRelease, inline: true, dist: distLocal},
		// Between locales (locale_peer.go): a coordinator tells each locale
		// its peers, and has one send a block straight to another.
		"locale_peers": {run: (*Server).cmdLocalePeers, dist: distLocal},
		"locale_push":  {run: (*Server).cmdLocalePush, detached: true, dist: distLocal},
		// (A coordinator's exchange runs it on each locale's block; from a
		// client on a coordinator it is refused, as any exchange without a
		// spread form.)
		"range_partition": ops((*Server).cmdRangePartition, distExchange),
		// Where an array's blocks are, and blocks a client stored on every
		// locale recorded as one array (cmd_locales.go); a lone server
		// answers locate with one locale and refuses adopt.
		"locate": {run: (*Server).cmdLocate, lane: true, dist: distEvery},
		"adopt":  {run: (*Server).cmdAdopt, creates: true, lane: true, dist: distEvery},

		// NumPy-like operations (cmd_ops.go).
		"binop":         {run: (*Server).cmdBinop, creates: true, writes: []string{"out"}, lane: true, dist: distElementwise},
		"unop":          {run: (*Server).cmdUnop, creates: true, writes: []string{"out"}, lane: true, dist: distElementwise},
		"astype":        ops((*Server).cmdAstype, distElementwise),
		"where":         ops((*Server).cmdWhere, distElementwise),
		"clip":          ops((*Server).cmdClip, distElementwise),
		"reduce":        {run: (*Server).cmdReduce, inlineSmall: []string{"a"}, lane: true, dist: distReduce},
		"scan":          ops((*Server).cmdScan, distReduce),
		"histogram":     ops((*Server).cmdHistogram, distReduce),
		"order_stats":   {run: (*Server).cmdOrderStats, lane: true, dist: distExchange},
		"full":          ops((*Server).cmdFull, distElementwise),
		"arange":        ops((*Server).cmdArange, distElementwise),
		"linspace":      ops((*Server).cmdLinspace, distElementwise),
		"random":        ops((*Server).cmdRandom, distElementwise),
		"concatenate":   ops((*Server).cmdConcatenate, distExchange),
		"getitem":       {run: (*Server).cmdGetitem, lane: true, dist: distGather},
		"setitem":       {run: (*Server).cmdSetitem, writes: []string{"a"}, lane: true, dist: distElementwise},
		"slice":         ops((*Server).cmdSlice, distExchange),
		"take":          ops((*Server).cmdTake, distExchange),
		"take_many":     ops((*Server).cmdTakeMany, distExchange),
		"compress":      ops((*Server).cmdCompress, distExchange),
		"compress_many": ops((*Server).cmdCompressMany, distExchange),
		"lookup":        ops((*Server).cmdLookup, distExchange),
		"repeat":        ops((*Server).cmdRepeat, distExchange),
		"sort":          ops((*Server).cmdSort, distExchange),
		"argsort":       ops((*Server).cmdArgsort, distExchange),
		"coargsort":     ops((*Server).cmdCoargsort, distExchange),
		"searchsorted":  ops((*Server).cmdSearchSorted, distExchange),
		"unique":        ops((*Server).cmdUnique, distExchange),
		"in1d":          ops((*Server).cmdIn1d, distExchange),
		"setop":         ops((*Server).cmdSetop, distExchange),

		// Strings (cmd_strings.go).
		"str_check":   {run: (*Server).cmdStrCheck, lane: true, dist: distEvery},
		"str_lengths": ops((*Server).cmdStrLengths, distElementwise),
		"str_compare": ops((*Server).cmdStrCompare, distElementwise),
		"str_search":  ops((*Server).cmdStrSearch, distElementwise),
		"str_take":    ops((*Server).cmdStrTake, distExchange),
		"str_concat":  ops((*Server).cmdStrConcat, distExchange),
		"str_stick":   ops((*Server).cmdStrStick, distElementwise),
		"str_hash":    ops((*Server).cmdStrHash, distElementwise),
		"str_unique":  ops((*Server).cmdStrUnique, distExchange),
		"str_in1d":    ops((*Server).cmdStrIn1d, distExchange),
		"str_argsort": ops((*Server).cmdStrArgsort, distExchange),
		"str_case":    ops((*Server).cmdStrCase, distElementwise),
		"str_split":   ops((*Server).cmdStrSplit, distElementwise),
		"str_encode":  ops((*Server).cmdStrEncode, distElementwise),
		"str_format":  ops((*Server).cmdStrFormat, distElementwise),
		"str_parse":   ops((*Server).cmdStrParse, distElementwise),
		"str_random":  ops((*Server).cmdStrRandom, distElementwise),
		"str_is":      ops((*Server).cmdStrIs, distElementwise),
		"str_strip":   ops((*Server).cmdStrStrip, distElementwise),
		"str_peel":    ops((*Server).cmdStrPeel, distElementwise),
		"str_affix":   ops((*Server).cmdStrAffix, distExchange),
		"str_match":   ops((*Server).cmdStrMatch, distExchange),
		"str_findall": ops((*Server).cmdStrFindAll, distExchange),
		"str_sub":     ops((*Server).cmdStrSub, distElementwise),

		// Group-by (cmd_groupby.go).
		"groupby":           groupby((*Server).cmdGroupBy),
		"groupby_agg":       groupby((*Server).cmdGroupAgg),
		"groupby_segments":  groupby((*Server).cmdGroupSegments),
		"groupby_head":      groupby((*Server).cmdGroupHead),
		"groupby_sample":    groupby((*Server).cmdGroupSample),
		"groupby_unique":    groupby((*Server).cmdGroupUnique),
		"groupby_broadcast": groupby((*Server).cmdGroupBroadcast),
		"groupby_scan":      groupby((*Server).cmdGroupScan),
		"groupby_topk":      groupby((*Server).cmdGroupTopK),
		"groupby_corr":      groupby((*Server).cmdGroupCorr),

		// Files (cmd_io.go).
		"read_parquet":  {run: (*Server).cmdReadParquet, creates: true, lane: true, dist: distScatter},
		"read_arrow":    {run: (*Server).cmdReadArrow, creates: true, lane: true, dist: distScatter},
		"to_parquet":    {run: (*Server).cmdToParquet, lane: true, dist: distEvery},
		"read_csv":      {run: (*Server).cmdReadCSV, creates: true, lane: true, dist: distScatter},
		"to_csv":        {run: (*Server).cmdToCSV, lane: true, dist: distEvery},
		"read_hdf":      {run: (*Server).cmdReadHDF, creates: true, lane: true, dist: distScatter},
		"to_hdf":        {run: (*Server).cmdToHDF, lane: true, dist: distEvery},
		"ls_hdf":        {run: (*Server).cmdLsHDF, lane: true, dist: distLocal},
		"to_arrow_file": {run: (*Server).cmdToArrowFile, lane: true, dist: distEvery},
		"save_all":      {run: (*Server).cmdSaveAll, lane: true, dist: distEvery},
		"checkpoint":    {run: (*Server).cmdCheckpoint, lane: true, dist: distEvery},
		"load_all":      {run: (*Server).cmdLoadAll, creates: true, writes: []string{anyArray}, lane: true, dist: distEvery},
	}
}

// commands is the dispatch table: commandTable's rows, and the commands
// tests add with register (some from variable initializers, which run
// before this init).
var commands = map[string]command{}

func init() {
	for name, c := range commandTable() {
		register(name, c)
	}
}

// register adds a command (tests); a duplicate name is a bug.
func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("server: command registered twice: " + name)
	}
	commands[name] = c
}

// creatingCommands lists, sorted, the commands that store new arrays.
func creatingCommands() []string {
	var names []string
	for name, c := range commands {
		if c.creates {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func commandNames() string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// cmdCommands sends the command table. It is a command of its own, not a
// part of get_config, so that get_config stays a small request (the table
// is about 5 KB).
func (s *Server) cmdCommands(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	tableOnce.Do(func() { table = commandsConfig() })
	return &response{result: map[string]any{"commands": table}}, nil
}

// table is commandsConfig's, made once: commands do not change once a
// server runs.
var (
	tableOnce sync.Once
	table     map[string]any
)

// commandsConfig is the commands command's table: per command what a
// client must know to send it and to keep its own state right
// (docs/protocol.md, "The command table").
func commandsConfig() map[string]any {
	out := make(map[string]any, len(commands))
	for name, c := range commands {
		writes := c.writes
		if writes == nil {
			writes = []string{}
		}
		out[name] = map[string]any{
			"creates":      c.creates,
			"writes":       slices.Clone(writes),
			"lane":         c.lane,
			"lane_payload": c.lanePayload,
			"payload":      c.payload,
			"distribution": string(c.dist),
		}
	}
	return out
}

// cmdNoop does nothing: a round trip's floor (Arkouda's _no_op, its noop
// benchmark).
func (s *Server) cmdNoop(r *request) (*response, error) {
	if err := r.args.Done(); err != nil {
		return nil, err
	}
	return &response{result: map[string]any{}}, nil
}
