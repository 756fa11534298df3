package server

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// docCommands returns the commands named in the first column of a
// Markdown file's command tables (those whose header's first cell is cmd).
func docCommands(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`([a-z0-9_]+)`")
	found := map[string]bool{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| cmd "):
			in = true
		case !strings.HasPrefix(line, "|"):
			in = false
		case in && strings.HasPrefix(line, "| `"):
			first := strings.SplitN(line[1:], "|", 2)[0]
			for _, m := range name.FindAllStringSubmatch(first, -1) {
				found[m[1]] = true
			}
		}
	}
	return found
}

// TestProtocolDocListsCommands: the protocol document's command tables
// (docs/protocol.md and docs/io.md) name exactly the commands of the table.
func TestProtocolDocListsCommands(t *testing.T) {
	doc := docCommands(t, "../docs/protocol.md")
	for n := range docCommands(t, "../docs/io.md") {
		doc[n] = true
	}
	table := commandTable()
	for name := range table {
		if !doc[name] {
			t.Errorf("command %q has no row in docs/protocol.md's (or docs/io.md's) command tables", name)
		}
	}
	for name := range doc {
		if _, ok := table[name]; !ok {
			t.Errorf("docs/protocol.md documents %q, which is not in the command table (server/commands.go)", name)
		}
	}
}

// TestCommandTableConsistent: the rows' properties agree with each other.
func TestCommandTableConsistent(t *testing.T) {
	dists := []distribution{distLocal, distEvery, distElementwise, distReduce, distExchange, distGather, distScatter}
	for name, c := range commandTable() {
		if c.run == nil {
			t.Errorf("%s: no handler", name)
		}
		if !slices.Contains(dists, c.dist) {
			t.Errorf("%s: distribution %q is not one of %v", name, c.dist, dists)
		}
		if c.lanePayload && !c.lane {
			t.Errorf("%s: lanePayload without lane", name)
		}
		if c.payload && c.lane && !c.lanePayload {
			t.Errorf("%s: takes payload frames and the lane, but not with payload", name)
		}
		if c.inline && (c.payload || len(c.inlineSmall) > 0 || c.onStream) {
			t.Errorf("%s: inline commands take no payload and no stream", name)
		}
		if slices.Contains(c.writes, anyArray) && len(c.writes) != 1 {
			t.Errorf("%s: writes %v: %q stands alone", name, c.writes, anyArray)
		}
	}
}

// TestGetConfigSendsCommandTable: the commands command sends the table, as
// the clients read it (client.CommandInfo, arktos' core layer), and
// get_config says it is there.
func TestGetConfigSendsCommandTable(t *testing.T) {
	s := startServer(t, Config{})
	d := dealer(t, s.Endpoint())
	sendRequest(t, d, 1, "get_config", nil)
	rep := recvReply(t, d, 10*time.Second)
	if rep == nil || rep.Status != 0 || rep.Result["command_table"] != true {
		t.Fatalf("get_config: %+v, want command_table true", rep)
	}
	sendRequest(t, d, 2, "commands", nil)
	table := recvReply(t, d, 10*time.Second)
	if table == nil || table.Status != 0 {
		t.Fatalf("commands: %+v", table)
	}
	got, ok := table.Result["commands"].(map[string]any)
	if !ok {
		t.Fatalf("the commands command sent no table: %T", table.Result["commands"])
	}
	for name, c := range commandTable() {
		row, ok := got[name].(map[string]any)
		if !ok {
			t.Errorf("get_config's commands lacks %q", name)
			continue
		}
		var writes []string
		for _, w := range row["writes"].([]any) {
			writes = append(writes, w.(string))
		}
		if row["creates"] != c.creates || row["lane"] != c.lane || row["lane_payload"] != c.lanePayload ||
			row["payload"] != c.payload || row["distribution"] != string(c.dist) || !slices.Equal(writes, c.writes) {
			t.Errorf("get_config's commands[%q] = %v, the table says %+v", name, row, c)
		}
	}
	creating, _ := rep.Result["creating"].([]any)
	var names []string
	for _, n := range creating {
		names = append(names, n.(string))
	}
	if !slices.Equal(names, creatingCommands()) {
		t.Errorf("creating %v, want %v", names, creatingCommands())
	}
}
