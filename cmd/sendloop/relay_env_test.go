package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/smtp"
)

// TestRelayFromTheFakesEnvFile is the README's relay snippet as a CI job runs it:
// `sendloop fake > fake.env; . ./fake.env`, then a Go program builds its relay from the
// environment (smtp.NewRelayFromEnv, here through the same reader with the sourced
// environment) and sends over TLS verified with the fake's CA file.
func TestRelayFromTheFakesEnvFile(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to source the env file with")
	}
	p := startFake(t, false)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fake.env"), []byte(strings.Join(p.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", ". ./fake.env && env")
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sourcing fake.env: %v", err)
	}
	sourced := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			sourced[k] = v
		}
	}
	lookup := func(name string) (string, bool) { v, ok := sourced[name]; return v, ok }

	relay, err := smtp.NewRelayFromLookup(lookup)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	res, err := relay.Send(context.Background(), &smtp.Message{From: "job@example.com", To: []string{"ann@example.net"}, Subject: "From the env file", Text: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	if res.MessageID == "" || res.Reply.Code != 250 {
		t.Errorf("result %+v", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), `relay: message from job@example.com to ann@example.net: "From the env file"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the fake did not log the message; stderr:\n%s", p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
