package launch

import (
	"reflect"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	for in, want := range map[string][]string{
		"node1":                  {"node1"},
		"node[1-3]":              {"node1", "node2", "node3"},
		"node[01-03,07],login1":  {"node01", "node02", "node03", "node07", "login1"},
		"n[8-10]":                {"n8", "n9", "n10"},
		"n[098-101]":             {"n098", "n099", "n100", "n101"},
		"rack[1-2]-n[1-2]":       {"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"},
		"a,b[3],c":               {"a", "b3", "c"},
		"gpu[1-2].cluster.local": {"gpu1.cluster.local", "gpu2.cluster.local"},
		"localhost":              {"localhost"},
	} {
		got, err := ExpandHostlist(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ExpandHostlist(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"":            "empty host list",
		"node[1-3":    "not closed",
		"node1-3]":    "without '['",
		"n[[1]]":      "inside brackets",
		"n[3-1]":      "range",
		"n[a-b]":      "range",
		"n[]":         "range",
		"a,,b":        "empty host name",
		"n[0-999999]": "more than 4096",
		"x y":         "space",
	} {
		if _, err := ExpandHostlist(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ExpandHostlist(%q): error %v, want one saying %q", in, err, says)
		}
	}
}

func TestExpandTasksPerNode(t *testing.T) {
	for in, want := range map[string][]int{"4": {4}, "2(x3),1": {2, 2, 2, 1}, "1,1": {1, 1}} {
		if got, err := ExpandTasksPerNode(in); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ExpandTasksPerNode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "2(3)", "2(x0)", "x", "2(x3", "1(x5000)"} {
		if _, err := ExpandTasksPerNode(in); err == nil {
			t.Errorf("ExpandTasksPerNode(%q): no error", in)
		}
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSlurm(t *testing.T) {
	base := map[string]string{"SLURM_NTASKS": "5", "SLURM_JOB_NODELIST": "n[1-3]", "SLURM_TASKS_PER_NODE": "2(x2),1"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	p, err := Slurm(env(with("SLURM_PROCID", "3", "SLURMD_NODENAME", "n2", "SLURM_LOCALID", "1")), 5555)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rank != 3 || p.Count != 5 || p.OnHost != 2 {
		t.Fatalf("plan %+v", p)
	}
	var addrs []string
	for r := range p.Count {
		addrs = append(addrs, p.Addr(r))
	}
	want := []string{"tcp://n1:5555", "tcp://n1:5556", "tcp://n2:5555", "tcp://n2:5556", "tcp://n3:5555"}
	if !reflect.DeepEqual(addrs, want) {
		t.Fatalf("addresses %q, want %q", addrs, want)
	}
	// The step's variables win over the job's (a step on part of the allocation).
	p, err = Slurm(env(with("SLURM_PROCID", "0", "SLURM_STEP_NUM_TASKS", "1", "SLURM_STEP_NODELIST", "n9", "SLURM_STEP_TASKS_PER_NODE", "1")), 7000)
	if err != nil || p.Count != 1 || p.Addr(0) != "tcp://n9:7000" {
		t.Fatalf("step plan %+v, %v", p, err)
	}
	for _, tc := range []struct {
		m    map[string]string
		says string
	}{
		{map[string]string{}, "SLURM_PROCID is not set"},
		{with("SLURM_PROCID", "x"), "not a rank"},
		{with("SLURM_PROCID", "5"), "not below"},
		{with("SLURM_PROCID", "0", "SLURM_TASKS_PER_NODE", "2"), "names 3 nodes"},
		{with("SLURM_PROCID", "0", "SLURM_NTASKS", "6"), "places 5 tasks"},
		{with("SLURM_PROCID", "1", "SLURMD_NODENAME", "n2"), "-m block"},
		{with("SLURM_PROCID", "1", "SLURM_LOCALID", "0"), "-m block"},
		{with("SLURM_PROCID", "0", "SLURM_JOB_NODELIST", "n[1-"), "not closed"},
	} {
		if _, err := Slurm(env(tc.m), 5555); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: error %v, want one saying %q", tc.m, err, tc.says)
		}
	}
	if _, err := Slurm(env(with("SLURM_PROCID", "0")), 65535); err == nil || !strings.Contains(err.Error(), "past 65535") {
		t.Errorf("port overflow: %v", err)
	}
}

func TestKubernetes(t *testing.T) {
	p, err := Kubernetes("arktos-2", "", 4, 5555)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rank != 2 || p.Count != 4 || p.Addr(0) != "tcp://arktos-0.arktos:5555" || p.Addr(3) != "tcp://arktos-3.arktos:5555" {
		t.Fatalf("plan %+v", p)
	}
	p, err = Kubernetes("my-set-0.my-svc.ns.svc.cluster.local", "my-svc", 2, 6000)
	if err != nil || p.Rank != 0 || p.Addr(1) != "tcp://my-set-1.my-svc:6000" {
		t.Fatalf("plan %+v, %v", p, err)
	}
	for _, tc := range []struct {
		host  string
		count int
		says  string
	}{
		{"arktos", 2, "not a StatefulSet pod's"},
		{"arktos-x", 2, "ordinal"},
		{"arktos-01", 2, "ordinal"},
		{"arktos-2", 2, "must equal the StatefulSet's replicas"},
		{"arktos-0", 0, "replicas"},
	} {
		if _, err := Kubernetes(tc.host, "", tc.count, 5555); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s/%d: error %v, want one saying %q", tc.host, tc.count, err, tc.says)
		}
	}
}

// FuzzHostlist: any string either expands to at most maxLocales non-empty
// names or is refused; nothing panics or runs away.
func FuzzHostlist(f *testing.F) {
	for _, s := range []string{"node[01-03,07],login1", "rack[1-2]-n[1-2]", "n[0-4095]", "a,,b", "n[[1]]", "x[9-1]"} {
		f.Add(s, "2(x3),1")
	}
	f.Fuzz(func(t *testing.T, hosts, tasks string) {
		out, err := ExpandHostlist(hosts)
		if err == nil {
			if len(out) == 0 || len(out) > maxLocales {
				t.Fatalf("%q expanded to %d names", hosts, len(out))
			}
			for _, h := range out {
				if h == "" {
					t.Fatalf("%q expanded to an empty name", hosts)
				}
			}
		}
		if per, err := ExpandTasksPerNode(tasks); err == nil && (len(per) == 0 || len(per) > maxLocales) {
			t.Fatalf("%q expanded to %d nodes", tasks, len(per))
		}
	})
}
