package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

// envPythonCheck is set by .ci/run, which installs python3: there the docs' Python example
// fails instead of skipping when python3 is missing.
const envPythonCheck = "SENDLOOP_PYTHON_CHECK"

// fakeDocExample returns the code block of docs/testing-with-the-fake.md marked
// <!-- checked: lang -->.
func fakeDocExample(t *testing.T, lang string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "testing-with-the-fake.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)<!-- checked: " + lang + " -->\n```[a-z]*\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, m, "no block marked %q", lang)
	return string(m[1])
}

// sendloopOnPath returns a directory holding the tested binary as "sendloop": the test
// binary, which is sendloop in an environment with asCLI.
func sendloopOnPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(binary)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, filepath.Join(dir, "sendloop")))
	return dir
}

// runExample runs an example program with the environment given and returns its output.
func runExample(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

func TestFakeDocShellExample(t *testing.T) {
	t.Parallel()
	script := fakeDocExample(t, "shell")
	env := []string{"PATH=" + sendloopOnPath(t) + string(os.PathListSeparator) + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), asCLI}
	out := runExample(t, env, "sh", "-c", script)
	require.Equal(t, "ok\n", out)
}

func TestFakeDocPythonExample(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv(envPythonCheck) != "" {
			t.Fatalf("%s is set but python3 is not on the PATH", envPythonCheck)
		}
		t.Skipf("no python3; .ci/run installs it and sets %s", envPythonCheck)
	}
	p := startFake(t, false)
	script := filepath.Join(t.TempDir(), "example.py")
	require.NoError(t, os.WriteFile(script, []byte(fakeDocExample(t, "python")), 0o600))
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, p.env...)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PYENV_") { // pyenv's shims find their interpreter by it
			env = append(env, kv)
		}
	}
	out := runExample(t, env, python, script)
	require.Equal(t, "ok\n", out)
}

// TestGitHubActionsDocPinsTheRelease: the version the page suggests pinning is the
// release's, as scripts/check-release-version also checks before a tag.
func TestGitHubActionsDocPinsTheRelease(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "github-actions.md"))
	require.NoError(t, err)
	pins := regexp.MustCompile("@(v[0-9][^`]*)`").FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, pins, "no pinned version")
	for _, p := range pins {
		require.Equal(t, "v"+sendloop.Version, p[1], "docs/github-actions.md pins %s", p[0])
	}
	require.Contains(t, string(doc), "Pin a version (`@v"+sendloop.Version+"`, the current release)", "the sentence scripts/check-release-version reads")
}
