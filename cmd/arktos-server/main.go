// Command arktos-server holds named, typed arrays in memory and serves them
// over ZeroMQ. Every flag can also be set by an ARKTOS_* environment
// variable (flags win):
//
//	arktos-server --addr tcp://127.0.0.1:5555 --max-memory 8GiB
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/arktos-dev/arktos/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "arktos-server:", err)
		os.Exit(2)
	}
}

// env returns ARKTOS_<NAME> or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("ARKTOS_" + name); ok {
		return v
	}
	return def
}

// zeroOff maps a flag's 0 (off) to Config's -1: Config's 0 is the default.
func zeroOff[T ~int64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

func run(args []string) error {
	fs := flag.NewFlagSet("arktos-server", flag.ContinueOnError)
	addr := fs.String("addr", env("ADDR", server.DefaultAddr), "ZeroMQ endpoint to bind (env ARKTOS_ADDR); a non-loopback address requires a token")
	maxMem := fs.String("max-memory", env("MAX_MEMORY", ""), "memory the arrays may hold, e.g. 8GiB (env ARKTOS_MAX_MEMORY; default half of physical memory)")
	token := fs.String("token", env("TOKEN", ""), "access token every request must carry (env ARKTOS_TOKEN); implies --auth")
	auth := fs.Bool("auth", env("AUTH", "") == "1" || strings.EqualFold(env("AUTH", ""), "true"), "require a token even on a loopback address (env ARKTOS_AUTH=1); without --token one is generated")
	tokenFile := fs.String("token-file", env("TOKEN_FILE", ""), "where a generated token is written (env ARKTOS_TOKEN_FILE; default ~/.arktos/token)")
	workersDef, _ := strconv.Atoi(env("WORKERS", "0"))
	workers := fs.Int("workers", workersDef, "worker goroutines (env ARKTOS_WORKERS; default all cores)")
	frameSize := fs.String("frame-size", env("FRAME_SIZE", "16MiB"), "largest payload frame, sent and accepted (env ARKTOS_FRAME_SIZE)")
	frameHeap := fs.String("frame-heap", env("FRAME_HEAP", ""), "freed ZeroMQ frames malloc keeps resident for the next message, e.g. 512MiB; 0: glibc's defaults, which fault every frame in afresh (env ARKTOS_FRAME_HEAP; default an eighth of --max-memory, at most 1GiB)")
	streamPortDef, _ := strconv.Atoi(env("STREAM_PORT", "0"))
	streamPort := fs.Int("stream-port", streamPortDef, "TCP port for bulk array streams beside the ZeroMQ socket (env ARKTOS_STREAM_PORT; 0: any free port, -1: none)")
	dataDir := fs.String("data-dir", env("DATA_DIR", server.DefaultDataDir), "folder that client file paths (read_parquet, to_parquet, save_all, ...) resolve in; nothing outside it is reachable (env ARKTOS_DATA_DIR)")
	checkpoint := fs.String("checkpoint", env("CHECKPOINT", ""), "save every array to this directory on clean shutdown and restore them at start (env ARKTOS_CHECKPOINT)")
	ckptEveryS := fs.String("checkpoint-interval", env("CHECKPOINT_INTERVAL", "0"), "with --checkpoint, also save it this often while any array changed, e.g. 5m; arrays unchanged since the last one are linked, not written again; 0: at shutdown and on request (ak.checkpoint()) only (env ARKTOS_CHECKPOINT_INTERVAL)")
	encrypt := fs.String("encrypt", env("ENCRYPT", "auto"), "CurveZMQ encryption of the ZeroMQ socket: auto (on for an address other hosts can reach), on, off (env ARKTOS_ENCRYPT)")
	serverKeyFile := fs.String("server-key-file", env("SERVER_KEY_FILE", ""), "the server's CURVE secret key, made there on first start (mode 0600; the public key clients need goes to <file>.pub); default ~/.arktos/server_key (env ARKTOS_SERVER_KEY_FILE)")
	maxReqS := fs.String("max-request-time", env("MAX_REQUEST_TIME", "0"), "cancel a request that runs longer than this, e.g. 10m (its client gets CANCELED; nothing is stored); 0: no limit (env ARKTOS_MAX_REQUEST_TIME)")
	maxStreamsDef, err := strconv.Atoi(env("MAX_STREAMS", "0"))
	if err != nil {
		return fmt.Errorf("ARKTOS_MAX_STREAMS %q: use a whole number such as %d", env("MAX_STREAMS", ""), server.DefaultMaxStreams)
	}
	maxStreams := fs.Int("max-streams", maxStreamsDef, fmt.Sprintf("bulk streams and request lanes open at once, over all clients (env ARKTOS_MAX_STREAMS; default %d; a client holds at most one of each)", server.DefaultMaxStreams))
	laneSpinS := fs.String("lane-spin", env("LANE_SPIN", server.DefaultLaneSpin.String()), "how long a request lane polls for the next request before it blocks, e.g. 200us; 0 turns polling off (env ARKTOS_LANE_SPIN)")
	logLevel := fs.String("log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (env ARKTOS_LOG_LEVEL)")
	simd := fs.Bool("simd", env("SIMD", "1") != "0", "run the AVX-512 kernels where the build and CPU have them (env ARKTOS_SIMD=0 for off: the plain loops, same answers, slower)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file, for go tool pprof (perf cannot sample on some VMs)")
	locales := fs.String("locales", env("LOCALES", "1"), "server processes (locales) to spread every array over: N starts N on this machine's loopback (this one is locale 0, the coordinator clients talk to, and it starts the others); slurm (one per srun task) or kubernetes:N (a StatefulSet of N pods) joins a set a resource manager started; memory and workers are divided among a machine's locales unless given (env ARKTOS_LOCALES; docs/locales.md)")
	service := fs.String("service", env("SERVICE", ""), "with --locales kubernetes:N, the headless Service that names the pods (env ARKTOS_SERVICE; default the StatefulSet's name)")
	localeRank := fs.Int("locale-rank", 0, "this process's rank in a set of locales (set by the coordinator for the locales it starts)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; see --help", fs.Args())
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", *logLevel)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg := server.Config{Addr: *addr, Token: *token, Auth: *auth, TokenFile: *tokenFile, Workers: *workers, StreamPort: *streamPort, Logger: log,
		DataDir: *dataDir, Checkpoint: *checkpoint, MaxStreams: *maxStreams}
	laneSpin, err := time.ParseDuration(*laneSpinS)
	if err != nil || laneSpin < 0 {
		return fmt.Errorf("--lane-spin (ARKTOS_LANE_SPIN) %q: use a duration such as 200us, or 0 to turn polling off", *laneSpinS)
	}
	cfg.LaneSpin = zeroOff(laneSpin)
	ckptEvery, err := time.ParseDuration(*ckptEveryS)
	if *ckptEveryS == "0" {
		ckptEvery, err = 0, nil
	}
	if err != nil || ckptEvery < 0 {
		return fmt.Errorf("--checkpoint-interval (ARKTOS_CHECKPOINT_INTERVAL) %q: use a duration such as 5m or 30s, or 0 for none", *ckptEveryS)
	}
	if ckptEvery > 0 && *checkpoint == "" {
		return fmt.Errorf("--checkpoint-interval %s needs --checkpoint DIR: the directory to save to", ckptEvery)
	}
	cfg.CheckpointInterval = ckptEvery
	maxReq, err := time.ParseDuration(*maxReqS)
	if *maxReqS == "0" {
		maxReq, err = 0, nil
	}
	if err != nil || maxReq < 0 {
		return fmt.Errorf("--max-request-time (ARKTOS_MAX_REQUEST_TIME) %q: use a duration such as 10m or 30s, or 0 for none", *maxReqS)
	}
	cfg.MaxRequestTime = maxReq
	cfg.Encrypt, cfg.ServerKeyFile = *encrypt, *serverKeyFile
	if *maxMem != "" {
		n, err := server.ParseBytes(*maxMem)
		if err != nil {
			return fmt.Errorf("--max-memory: %w", err)
		}
		if n <= 0 {
			return fmt.Errorf("--max-memory must be positive, got %q", *maxMem)
		}
		cfg.MaxMemory = n
	}
	n, err := server.ParseBytes(*frameSize)
	if err != nil {
		return fmt.Errorf("--frame-size: %w", err)
	}
	cfg.FrameSize = int(n)
	if *frameHeap != "" {
		n, err := server.ParseBytes(*frameHeap)
		if err != nil || n < 0 {
			return fmt.Errorf("--frame-heap (ARKTOS_FRAME_HEAP) %q: use a size such as 512MiB, or 0 for glibc's defaults", *frameHeap)
		}
		cfg.FrameHeap = zeroOff(n)
	}
	cfg.NoSIMD = !*simd
	cfg.LocaleRank = *localeRank
	if err := setLocales(fs, &cfg, *locales, *service, *checkpoint, *maxMem != "", *workers > 0); err != nil {
		return err
	}
	if n, err := strconv.Atoi(*locales); err == nil && n > 1 {
		// Each locale gets its share of the machine unless told.
		if *maxMem == "" {
			cfg.MaxMemory = server.DefaultMaxMemory() / int64(n)
		}
		if *workers <= 0 {
			cfg.Workers = max(1, runtime.NumCPU()/n)
		}
		dir, err := filepath.Abs(cmp.Or(*dataDir, server.DefaultDataDir))
		if err != nil {
			return fmt.Errorf("--data-dir: %w", err)
		}
		common := []string{"--max-memory", strconv.FormatInt(cfg.MaxMemory, 10), "--workers", strconv.Itoa(cfg.Workers),
			"--frame-size", *frameSize, "--data-dir", dir, "--log-level", *logLevel, "--simd=" + strconv.FormatBool(*simd),
			"--max-request-time", *maxReqS, "--lane-spin", *laneSpinS}
		procs, err := startLocales(n, common)
		if err != nil {
			return err
		}
		defer procs.stop()
		cfg.Peers = procs.urls
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	server.LimitMemory(srv.MaxMemory())
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile() // (on a clean stop: SIGINT or SIGTERM)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return srv.Run(ctx)
}
