package main

import (
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
