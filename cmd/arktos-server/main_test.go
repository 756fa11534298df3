package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestBadFlags: a bad value for an option stops the server before it binds
// anything, with an error that names the option (and its environment
// variable where it has one) and says what to give instead.
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--frame-heap", "lots"}, []string{"--frame-heap", "ARKTOS_FRAME_HEAP", `"lots"`, "512MiB"}},
		{[]string{"--frame-heap", "-1GiB"}, []string{"--frame-heap", "or 0 for glibc's defaults"}},
		{[]string{"--max-memory", "0"}, []string{"--max-memory must be positive"}},
		{[]string{"--max-memory", "2XB"}, []string{"--max-memory"}},
		{[]string{"--frame-size", "big"}, []string{"--frame-size"}},
		{[]string{"--lane-spin", "soon"}, []string{"--lane-spin", "ARKTOS_LANE_SPIN", "200us"}},
		{[]string{"--max-streams", "-1"}, []string{"--max-streams must be positive", "--stream-port -1"}},
		{[]string{"--log-level", "loud"}, []string{"--log-level", "debug, info, warn or error"}},
		{[]string{"stray"}, []string{"unexpected arguments", "stray"}},
	} {
		err := run(append(tc.args, "--addr", "tcp://127.0.0.1:1"))
		if err == nil {
			t.Fatalf("%v: no error", tc.args)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", tc.args, err, w)
			}
		}
	}
}

// TestDeployFiles: the launch files in deploy/ agree with the flags they
// pass (the StatefulSet's replicas and kubernetes:N, its serviceName and
// the headless Service), and the sbatch script is valid bash.
func TestDeployFiles(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/arktos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(b)
	replicas := regexp.MustCompile(`(?m)^  replicas: (\d+)$`).FindStringSubmatch(y)
	locales := regexp.MustCompile(`--locales=kubernetes:(\d+)`).FindStringSubmatch(y)
	if replicas == nil || locales == nil || replicas[1] != locales[1] {
		t.Errorf("arktos.yaml: replicas %v and --locales=kubernetes:N %v must agree", replicas, locales)
	}
	if !strings.Contains(y, "serviceName: arktos\n") || !strings.Contains(y, "clusterIP: None") || !strings.Contains(y, "podManagementPolicy: Parallel") {
		t.Error("arktos.yaml: the StatefulSet needs the headless Service arktos and Parallel pod management (the coordinator waits for the others)")
	}
	if out, err := exec.Command("bash", "-n", "../../deploy/slurm/arktos.sbatch").CombinedOutput(); err != nil {
		t.Errorf("arktos.sbatch: %v: %s", err, out)
	}
	if b, err := os.ReadFile("../../deploy/slurm/arktos.sbatch"); err != nil || !strings.Contains(string(b), "--locales slurm") {
		t.Errorf("arktos.sbatch does not start --locales slurm (%v)", err)
	}
}

// TestManagerLaunchFlags: --locales kubernetes:N and slurm refuse what
// cannot work before binding anything.
func TestManagerLaunchFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--locales", "kubernetes:x"}, "kubernetes:N"},
		{[]string{"--locales", "mpi"}, "slurm (under srun), or kubernetes:N"},
		{[]string{"--locales", "slurm"}, "SLURM_PROCID is not set"},
		{[]string{"--locales", "0"}, "use 1 (one process) to 256"},
	} {
		err := run(append(tc.args, "--addr", "tcp://127.0.0.1:1"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
