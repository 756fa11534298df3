package main

// launch.go: --locales slurm and --locales kubernetes:N, a set of locales
// that a resource manager started, one process per task or pod. Each works
// out its rank and every rank's address from the manager's environment
// (internal/launch); rank 0 is the coordinator and dials the others, which
// serve as locales. Membership is fixed at start.

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/arktos-dev/arktos/internal/launch"
	"github.com/arktos-dev/arktos/server"
)

// managerPeerWait: how long a coordinator a resource manager started waits
// for its locales to listen (pods may pull an image first).
const managerPeerWait = 5 * time.Minute

// flagSet reports whether flag name was given, on the command line or as
// its ARKTOS_ environment variable.
func flagSet(fs *flag.FlagSet, name, envName string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, inEnv := os.LookupEnv("ARKTOS_" + envName)
	return set || inEnv
}

// setLocales checks --locales; for a set that a resource manager started
// it sets cfg's address, rank and peers (rank 0) from the manager's
// environment, and each locale's default share of its host.
func setLocales(fs *flag.FlagSet, cfg *server.Config, spec, service, checkpoint string, memGiven, workersGiven bool) error {
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 1 || n > 256 {
			return fmt.Errorf("--locales %d: use 1 (one process) to 256 on this machine, or slurm / kubernetes:N for a set a resource manager starts", n)
		}
		if n > 1 && checkpoint != "" {
			return fmt.Errorf("--checkpoint with --locales %d is not supported yet: use save_all, or one locale", n)
		}
		return nil
	}
	hostPort, ok := strings.CutPrefix(cfg.Addr, "tcp://")
	host, portS, err := net.SplitHostPort(hostPort)
	port, perr := strconv.Atoi(portS)
	if !ok || err != nil || perr != nil || port <= 0 {
		return fmt.Errorf("--locales %s: --addr %q must be tcp://host:port with a port number (the port every locale listens on, plus its local id under Slurm)", spec, cfg.Addr)
	}
	var plan *launch.Plan
	switch {
	case spec == "slurm":
		plan, err = launch.Slurm(os.Getenv, port)
	case strings.HasPrefix(spec, "kubernetes:"):
		n, cerr := strconv.Atoi(strings.TrimPrefix(spec, "kubernetes:"))
		if cerr != nil {
			return fmt.Errorf("--locales %q: write kubernetes:N with N the StatefulSet's replicas, e.g. kubernetes:4", spec)
		}
		hostname, herr := os.Hostname()
		if herr != nil {
			return fmt.Errorf("--locales %s: this pod's host name: %w", spec, herr)
		}
		plan, err = launch.Kubernetes(hostname, service, n, port)
	default:
		return fmt.Errorf("--locales %q: give a number (processes on this machine), slurm (under srun), or kubernetes:N (a StatefulSet of N pods)", spec)
	}
	if err != nil {
		return err
	}
	if checkpoint != "" && plan.Count > 1 {
		return fmt.Errorf("--checkpoint with --locales %s is not supported yet: use save_all, or one locale", spec)
	}
	if cfg.Token == "" {
		return fmt.Errorf("--locales %s: every locale needs the same token: set ARKTOS_TOKEN in the job's environment (export ARKTOS_TOKEN=$(openssl rand -hex 16) before srun; a Secret's key in Kubernetes), or pass --token", spec)
	}
	// Bind every interface unless --addr named one: the others reach this
	// locale by its host name.
	bind := "*"
	if flagSet(fs, "addr", "ADDR") {
		bind = host
	}
	cfg.Addr = "tcp://" + net.JoinHostPort(bind, strconv.Itoa(plan.Ports[plan.Rank]))
	if bind == "*" {
		cfg.Addr = "tcp://*:" + strconv.Itoa(plan.Ports[plan.Rank])
	}
	cfg.LocaleRank = plan.Rank
	cfg.PeerWait = managerPeerWait
	if plan.Rank == 0 {
		for r := 1; r < plan.Count; r++ {
			cfg.Peers = append(cfg.Peers, plan.Addr(r)+"?token="+url.QueryEscape(cfg.Token))
		}
	}
	if !memGiven {
		cfg.MaxMemory = server.DefaultMaxMemory() / int64(plan.OnHost)
	}
	if !workersGiven {
		cfg.Workers = max(1, runtime.NumCPU()/plan.OnHost)
		if c, err := strconv.Atoi(os.Getenv("SLURM_CPUS_PER_TASK")); err == nil && c > 0 && plan.Manager == "slurm" {
			cfg.Workers = c
		}
	}
	cfg.Logger.Info("locale of a set", "manager", plan.Manager, "rank", plan.Rank, "locales", plan.Count,
		"reached_at", plan.Addr(plan.Rank), "coordinator", plan.Addr(0))
	return nil
}
