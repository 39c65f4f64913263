package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	ctx, interrupted, stop := notifyInterrupts()
	code := run(ctx, os.Args[1:], &env{
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		stderrTTY: isCharDevice(os.Stderr),
	})
	stop()
	os.Exit(interrupted.exitCode(code))
}

// isCharDevice reports whether f is a character device: a terminal, for the progress line.
func isCharDevice(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// env is what the process gets from outside: streams and environment variables.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	stderrTTY      bool
}

// app is one invocation: the environment and the global flags.
type app struct {
	*env
	json    bool
	fake    bool
	quiet   bool
	verbose bool
	timeout time.Duration

	fakeSrv *fakeService // started on first use with --fake
}

// usageError is a mistake in the invocation or the configuration: exit code 2.
type usageError struct {
	msg string
	cmd string // the command whose help to point at, "" for the overview
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), cmd: cmd}
}

// configError is a usage error about the environment (a variable unset or invalid).
func configError(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), cmd: "-"}
}

// command is a subcommand.
type command struct {
	name     string
	args     string // the synopsis after the name, e.g. "--list ID [--format csv|json]"
	summary  string // one line, for the overview
	help     string // the body of `sendloop help <name>`
	examples string
	// setup defines the command's flags and returns what runs it with the arguments left.
	setup func(fs *flag.FlagSet) func(ctx context.Context, a *app, args []string) error
}

func commands() []*command {
	return []*command{syncCommand(), exportCommand(), sendCommand(), callCommand(), listsCommand(),
		reportCommand(), fakeCommand()}
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run runs the tool with the arguments after the program name and returns the exit code.
func run(ctx context.Context, args []string, e *env) int {
	a := &app{env: e}
	global := flag.NewFlagSet("sendloop", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.BoolVar(&a.json, "json", false, "")
	global.BoolVar(&a.fake, "fake", false, "")
	global.BoolVar(&a.quiet, "quiet", false, "")
	global.BoolVar(&a.verbose, "verbose", false, "")
	global.DurationVar(&a.timeout, "timeout", 0, "")
	version := global.Bool("version", false, "")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printOverview(e.stdout)
			return exitOK
		}
		return a.fail(usagef("", "%v", err))
	}
	if *version {
		fmt.Fprintf(e.stdout, "sendloop %s (sendloop-go)\n", sendloop.Version)
		return exitOK
	}
	rest := global.Args()
	if len(rest) == 0 {
		printOverview(e.stderr)
		return exitUsage
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return a.help(rest)
	}
	cmd := findCommand(name)
	if cmd == nil {
		return a.fail(usagef("", "unknown command %q", name))
	}
	if a.timeout < 0 {
		return a.fail(usagef("", "--timeout cannot be negative"))
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runner := cmd.setup(fs)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(e.stdout, cmd)
			return exitOK
		}
		msg := err.Error()
		if isGlobalFlag(err) {
			msg += " (global flags go before the command: sendloop --json " + name + " …)"
		}
		return a.fail(usagef(name, "%s", msg))
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	defer a.closeFake()
	return a.fail(runner(ctx, a, fs.Args()))
}

// isGlobalFlag reports a "flag provided but not defined" error about a global flag.
func isGlobalFlag(err error) bool {
	msg := err.Error()
	for _, f := range []string{"json", "fake", "quiet", "verbose", "timeout", "version"} {
		if strings.HasSuffix(msg, ": -"+f) || strings.HasSuffix(msg, ": --"+f) {
			return true
		}
	}
	return false
}

// fail prints err, if any, and returns its exit code.
func (a *app) fail(err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(a.stderr, "sendloop: %s\n", strings.TrimPrefix(err.Error(), "sendloop: "))
	var ue *usageError
	if errors.As(err, &ue) {
		switch ue.cmd {
		case "":
			fmt.Fprintln(a.stderr, "Run 'sendloop help' for usage.")
		case "-":
		default:
			fmt.Fprintf(a.stderr, "Run 'sendloop help %s' for usage.\n", ue.cmd)
		}
		return exitUsage
	}
	return exitFailure
}

// help runs `sendloop help [command]`.
func (a *app) help(args []string) int {
	switch {
	case len(args) == 0:
		printOverview(a.stdout)
		return exitOK
	case len(args) > 1:
		return a.fail(usagef("", "help takes one command name"))
	}
	if args[0] == "help" {
		printOverview(a.stdout)
		return exitOK
	}
	cmd := findCommand(args[0])
	if cmd == nil {
		return a.fail(usagef("", "unknown command %q", args[0]))
	}
	printHelp(a.stdout, cmd)
	return exitOK
}

const overviewHead = `sendloop keeps Sendloop subscriber lists in step with CSV files, exports them, sends mail
through the SMTP relay, makes raw API calls and serves a local fake of the service.

Usage:
  sendloop [global flags] <command> [flags] [arguments]

Commands:
`

const overviewTail = `  help      show help for a command

Global flags (before the command):
  --json            machine-readable output: JSON on stdout
  --fake            run against an in-process fake of the service holding demo data
                    (list 1 "Demo"), instead of SENDLOOP_API_KEY's account
  --quiet           no progress and no notes on stderr (errors are still printed)
  --verbose         log every API request (command, attempt, status, duration) to stderr
  --timeout DUR     give up after DUR (e.g. 30s, 10m); default: no limit
  --version         print the version and exit

Environment:
  SENDLOOP_API_KEY         the API key (required unless --fake)
  SENDLOOP_BASE_URL        the account's host, e.g. https://acme.sendloop.com
                           (default https://app.sendloop.com)
  SENDLOOP_SMTP_HOST, SENDLOOP_SMTP_PORT, SENDLOOP_SMTP_USER, SENDLOOP_SMTP_PASSWORD,
  SENDLOOP_SMTP_CA_FILE    the relay, for send (see 'sendloop help send')

Exit status: 0 success; 1 failure, including a run that completed with rejected rows;
2 usage or configuration error.

Run 'sendloop help <command>' for a command's flags.
`

func printOverview(w io.Writer) {
	var b strings.Builder
	b.WriteString(overviewHead)
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString(overviewTail)
	_, _ = io.WriteString(w, b.String())
}

// printHelp writes a command's help: synopsis, description, flags and examples.
func printHelp(w io.Writer, cmd *command) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: sendloop [global flags] %s %s\n\n", cmd.name, cmd.args)
	b.WriteString(strings.TrimSpace(cmd.help))
	b.WriteString("\n")
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.setup(fs)
	var lines [][2]string
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if name != "" {
			left += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += " (default " + f.DefValue + ")"
		}
		width = max(width, len(left))
		lines = append(lines, [2]string{left, usage})
	})
	if len(lines) > 0 {
		b.WriteString("\nFlags:\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, l[0], l[1])
		}
	}
	if cmd.examples != "" {
		b.WriteString("\nExamples:\n")
		for _, line := range strings.Split(strings.TrimSpace(cmd.examples), "\n") {
			b.WriteString("  " + strings.TrimSpace(line) + "\n")
		}
	}
	b.WriteString("\nGlobal flags, the environment and exit codes: sendloop help\n")
	_, _ = io.WriteString(w, b.String())
}
