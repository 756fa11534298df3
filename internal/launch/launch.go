// Package launch works out where this process stands in a set of locales
// that a resource manager (Slurm, Kubernetes) started: its rank, how many
// there are, and every rank's address, from the manager's own environment
// alone, so the locales need no rendezvous service of their own.
package launch

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Plan is one process's view of its set of locales.
type Plan struct {
	Manager string // "slurm" or "kubernetes"
	Rank    int
	Count   int
	// Hosts[r] and Ports[r]: where rank r listens (Addr(r)).
	Hosts []string
	Ports []int
	// OnHost is how many locales share this process's host (its share of
	// the memory).
	OnHost int
}

// Addr is rank r's ZeroMQ endpoint.
func (p *Plan) Addr(r int) string {
	return "tcp://" + net.JoinHostPort(p.Hosts[r], strconv.Itoa(p.Ports[r]))
}

// maxLocales bounds a set (and so what a hostlist may expand to).
const maxLocales = 4096

// Slurm is the plan of a task of `srun arktos-server --locales slurm`.
// Slurm's default block distribution is assumed (ranks fill each node in
// node-list order, SLURM_LOCALID 0.. on each): it is checked against
// SLURMD_NODENAME and SLURM_LOCALID where Slurm sets them, so a cyclic
// distribution fails at start instead of wiring ranks to the wrong
// addresses. Rank r listens on port basePort + its local id on its node.
func Slurm(getenv func(string) string, basePort int) (*Plan, error) {
	need := func(names ...string) (string, string, error) {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return n, v, nil
			}
		}
		return "", "", fmt.Errorf("--locales slurm: %s is not set: start every locale with srun (srun -N 4 arktos-server --locales slurm), inside an allocation (sbatch or salloc)", names[0])
	}
	_, procid, err := need("SLURM_PROCID")
	if err != nil {
		return nil, err
	}
	ntName, ntasks, err := need("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")
	if err != nil {
		return nil, err
	}
	nlName, nodelist, err := need("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	if err != nil {
		return nil, err
	}
	tpName, tpn, err := need("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
	if err != nil {
		return nil, err
	}
	rank, err := strconv.Atoi(procid)
	if err != nil || rank < 0 {
		return nil, fmt.Errorf("--locales slurm: SLURM_PROCID %q is not a rank (a whole number from 0)", procid)
	}
	count, err := strconv.Atoi(ntasks)
	if err != nil || count < 1 || count > maxLocales {
		return nil, fmt.Errorf("--locales slurm: %s %q is not a task count from 1 to %d", ntName, ntasks, maxLocales)
	}
	if rank >= count {
		return nil, fmt.Errorf("--locales slurm: SLURM_PROCID %d is not below %s %d", rank, ntName, count)
	}
	nodes, err := ExpandHostlist(nodelist)
	if err != nil {
		return nil, fmt.Errorf("--locales slurm: %s: %w", nlName, err)
	}
	perNode, err := ExpandTasksPerNode(tpn)
	if err != nil {
		return nil, fmt.Errorf("--locales slurm: %s: %w", tpName, err)
	}
	if len(perNode) != len(nodes) {
		return nil, fmt.Errorf("--locales slurm: %s %q names %d nodes and %s %q gives tasks for %d", nlName, nodelist, len(nodes), tpName, tpn, len(perNode))
	}
	p := &Plan{Manager: "slurm", Rank: rank, Count: count}
	localID := -1
	for i, node := range nodes {
		for j := range perNode[i] {
			if len(p.Hosts) == rank {
				p.OnHost, localID = perNode[i], j
			}
			p.Hosts = append(p.Hosts, node)
			p.Ports = append(p.Ports, basePort+j)
		}
	}
	if len(p.Hosts) != count {
		return nil, fmt.Errorf("--locales slurm: %s %q places %d tasks, but %s is %d", tpName, tpn, len(p.Hosts), ntName, count)
	}
	if name := getenv("SLURMD_NODENAME"); name != "" && name != p.Hosts[rank] {
		return nil, fmt.Errorf("--locales slurm: task %d runs on %s, but Slurm's block distribution would put it on %s: start with srun -m block (the default), not a cyclic or arbitrary distribution", rank, name, p.Hosts[rank])
	}
	if id := getenv("SLURM_LOCALID"); id != "" && id != strconv.Itoa(localID) {
		return nil, fmt.Errorf("--locales slurm: task %d has SLURM_LOCALID %s, but Slurm's block distribution would give it %d: start with srun -m block (the default)", rank, id, localID)
	}
	for _, port := range p.Ports {
		if port > 65535 {
			return nil, fmt.Errorf("--locales slurm: port %d (the --addr port plus a task's local id) is past 65535: give a lower --addr port", port)
		}
	}
	return p, nil
}

// Kubernetes is the plan of pod hostname (a StatefulSet's "<set>-<ordinal>")
// in a set of count locales: rank = the ordinal, and rank r is reached at
// "<set>-<r>.<service>:port", the headless Service's DNS name for that pod
// (service "" means a Service named as the StatefulSet, as deploy/ has it).
func Kubernetes(hostname, service string, count, port int) (*Plan, error) {
	if count < 1 || count > maxLocales {
		return nil, fmt.Errorf("--locales kubernetes:%d: give the StatefulSet's replicas, from 1 to %d", count, maxLocales)
	}
	host, _, _ := strings.Cut(hostname, ".")
	i := strings.LastIndexByte(host, '-')
	if i <= 0 {
		return nil, fmt.Errorf("--locales kubernetes: the host name %q is not a StatefulSet pod's (<set>-<ordinal>): run arktos-server in a StatefulSet (deploy/kubernetes)", hostname)
	}
	set := host[:i]
	rank, err := strconv.Atoi(host[i+1:])
	if err != nil || rank < 0 || strconv.Itoa(rank) != host[i+1:] {
		return nil, fmt.Errorf("--locales kubernetes: the host name %q does not end in a pod ordinal (<set>-<ordinal>)", hostname)
	}
	if rank >= count {
		return nil, fmt.Errorf("--locales kubernetes:%d: this pod's ordinal is %d: the count must equal the StatefulSet's replicas", count, rank)
	}
	if service == "" {
		service = set
	}
	p := &Plan{Manager: "kubernetes", Rank: rank, Count: count, OnHost: 1}
	for r := range count {
		p.Hosts = append(p.Hosts, set+"-"+strconv.Itoa(r)+"."+service)
		p.Ports = append(p.Ports, port)
	}
	return p, nil
}

// ExpandHostlist expands a Slurm host list ("node[01-03,07],login1",
// "rack[1-2]-n[1-2]") into host names, in order.
func ExpandHostlist(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty host list")
	}
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '[':
				if depth++; depth > 1 {
					return nil, fmt.Errorf("host list %q: '[' inside brackets at byte %d", s, i)
				}
				continue
			case ']':
				if depth--; depth < 0 {
					return nil, fmt.Errorf("host list %q: ']' without '[' at byte %d", s, i)
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth != 0 {
			return nil, fmt.Errorf("host list %q: '[' not closed", s)
		}
		if s[start:i] == "" {
			return nil, fmt.Errorf("host list %q: an empty host name at byte %d", s, start)
		}
		hosts, err := expandOne(s[start:i], maxLocales-len(out))
		if err != nil {
			return nil, fmt.Errorf("host list %q: %w", s, err)
		}
		out = append(out, hosts...)
		start = i + 1
	}
	return out, nil
}

// expandOne expands one host pattern (no top-level commas, brackets
// balanced and not nested), giving up past limit names; "" (the empty tail
// after a last "]") is one empty name.
func expandOne(pat string, limit int) ([]string, error) {
	open := strings.IndexByte(pat, '[')
	if open < 0 {
		if strings.ContainsAny(pat, "] \t") {
			return nil, fmt.Errorf("host name %q holds a ']' or a space", pat)
		}
		return []string{pat}, nil
	}
	end := strings.IndexByte(pat, ']')
	prefix, ranges, rest := pat[:open], pat[open+1:end], pat[end+1:]
	tails, err := expandOne(rest, limit)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rg := range strings.Split(ranges, ",") {
		lo, hi, isRange := strings.Cut(rg, "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.ParseUint(lo, 10, 31)
		b, err2 := strconv.ParseUint(hi, 10, 31)
		if lo == "" || hi == "" || err1 != nil || err2 != nil || a > b {
			return nil, fmt.Errorf("%q is not a number or a range lo-hi inside [ ]", rg)
		}
		width := len(lo) // zero padding, as "01-10" gives 01 .. 10
		for v := a; v <= b; v++ {
			if len(out)+len(tails) > limit {
				return nil, fmt.Errorf("it names more than %d hosts", maxLocales)
			}
			num := strconv.FormatUint(v, 10)
			if len(num) < width {
				num = strings.Repeat("0", width-len(num)) + num
			}
			for _, t := range tails {
				out = append(out, prefix+num+t)
			}
		}
	}
	return out, nil
}

// ExpandTasksPerNode expands Slurm's tasks-per-node form ("2(x3),1": two
// tasks on each of three nodes, then one) into a count per node.
func ExpandTasksPerNode(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, rep := part, "1"
		if i := strings.IndexByte(part, '('); i >= 0 {
			if !strings.HasPrefix(part[i:], "(x") || !strings.HasSuffix(part, ")") {
				return nil, fmt.Errorf("%q: %q is not n or n(xk)", s, part)
			}
			n, rep = part[:i], part[i+2:len(part)-1]
		}
		v, err1 := strconv.Atoi(n)
		k, err2 := strconv.Atoi(rep)
		if err1 != nil || err2 != nil || v < 1 || v > maxLocales || k < 1 || len(out)+k > maxLocales {
			return nil, fmt.Errorf("%q: %q is not n or n(xk) with n and k from 1 to %d", s, part, maxLocales)
		}
		for range k {
			out = append(out, v)
		}
	}
	return out, nil
}
