package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestFakeSeed: `sendloop fake --seed FILE` starts with the file's data (the sendlooptest
// example), and the tool reads it back as any client would.
func TestFakeSeed(t *testing.T) {
	t.Parallel()
	example, err := filepath.Abs(filepath.Join("..", "..", "sendlooptest", "testdata", "seed-example.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := startFake(t, false, "--seed", example)
	r := invocation{args: []string{"--json", "lists"}, env: p.env}.run(t)
	expect(t, r, exitOK, nil, nil)
	var lists []struct {
		ID   int    `json:"list_id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &lists); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	names := map[int]string{}
	for _, l := range lists {
		names[l.ID] = l.Name
	}
	if len(names) != 2 || names[7] != "Customers" || names[1] != "Newsletter" {
		t.Errorf("lists %s: want the seed's, without the demo list", r.stdout)
	}
	r = invocation{args: []string{"export", "--list", "7", "--segment", "5"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"ann@example.com,Acme,pro,2024-03-01", "dee@example.com"}, nil)
}

func TestFakeSeedFaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, seed string
		stderr     []string
	}{
		{"unknown member", `{"lists": [{"name": "A", "subscribers": [{"email": "a@example.com", "statuz": "x"}]}]}`,
			[]string{"--seed", "seed: lists[0].subscribers[0].statuz: unknown member"}},
		{"unknown status", `{"lists": [{"name": "A"}, {"name": "B", "subscribers": [{"email": "a@example.com", "status": "Foo"}]}]}`,
			[]string{`seed: lists[1].subscribers[0].status: unknown status "Foo"`}},
		{"two faults", `{"lists": [{"name": ""}], "suppressions": [{"email": "x"}]}`,
			[]string{"seed: lists[0].name: a list needs a name", `seed: suppressions[0].email: "x" is not an address`}},
		{"not JSON", `lists: []`, []string{"seed: not a JSON document: line 1"}},
		{"missing file", "", []string{"no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, "missing.json")
			if tt.seed != "" {
				path = writeFile(t, dir, tt.name+".json", tt.seed)
			}
			r := invocation{args: []string{"fake", "--addr", "127.0.0.1:0", "--smtp-addr", "127.0.0.1:0", "--seed", path}}.run(t)
			expect(t, r, exitUsage, nil, tt.stderr)
			if r.stdout != "" {
				t.Errorf("settings printed for a refused seed: %s", r.stdout)
			}
		})
	}
}
