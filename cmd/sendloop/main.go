package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/legacy"
	"github.com/go-sendloop/sendloop/smtp"
	"golang.org/x/term"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	ctx, stop := notifyInterrupts()
	code := run(ctx, os.Args[1:], &env{
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		stderrTTY: isTerminal(os.Stderr, os.Getenv),
	})
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a terminal that can draw a progress line: not a pipe, a
// file or /dev/null (a character device, but no terminal), and not TERM=dumb.
func isTerminal(f *os.File, getenv func(string) string) bool {
	return term.IsTerminal(int(f.Fd())) && getenv("TERM") != "dumb"
}

// env is what the process gets from outside: streams and environment variables.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	stderrTTY      bool
	// otlpClient sends the OTLP exports; nil for the exporter's own. Tests set their
	// server's.
	otlpClient *http.Client
	// otlpFlush bounds the flush of the traces at exit; zero for tracingFlushTimeout. Tests
	// of a collector that never answers set less.
	otlpFlush time.Duration
}

// app is one invocation: the environment and the global flags.
type app struct {
	*env
	json    bool
	fake    bool
	quiet   bool
	verbose bool
	timeout time.Duration
	otel    bool

	// tracing exports the invocation's traces over OTLP (--otel or the OTEL_ variables);
	// nil when not asked.
	tracing *tracing

	fakeSrv *fakeService // started on first use with --fake

	// ctx is the run's context: a failure after a signal exits with the signal's code.
	ctx context.Context
}

// usageError is a mistake in the invocation, found by the checks of the flags and
// arguments made before any network call: exit code 2, and a hint to the command's help.
type usageError struct {
	msg string
	cmd string // the command whose help to point at, "" for the overview
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), cmd: cmd}
}

// inputError is exit code 2 for what the help would not fix: a file that cannot be read or
// does not fit, a journal of another job, the environment, a guard's refusal. It prints no
// usage hint; the message says what to change.
type inputError struct {
	msg string
}

func (e *inputError) Error() string { return e.msg }

func inputf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// configError is an input error about the environment (a variable unset or invalid).
func configError(format string, args ...any) error {
	return inputf(format, args...)
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
		reportCommand(), journalCommand(), fakeCommand(), workerCommand()}
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
// Flags may come anywhere: global flags and the command's before or after the command name
// and after positional arguments; "--" ends the flags.
func run(ctx context.Context, args []string, e *env) int {
	a := &app{env: e, json: wantsJSON(args), ctx: ctx}
	global := flag.NewFlagSet("sendloop", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.BoolVar(&a.json, "json", a.json, "")
	global.BoolVar(&a.fake, "fake", false, "")
	global.BoolVar(&a.quiet, "quiet", false, "")
	global.BoolVar(&a.verbose, "verbose", false, "")
	global.DurationVar(&a.timeout, "timeout", 0, "")
	global.BoolVar(&a.otel, "otel", false, "")
	version := global.Bool("version", false, "")

	name, at := commandName(args, global)
	var cmd *command
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var runner func(context.Context, *app, []string) error
	if name != "" && name != "help" && name != "version" {
		if cmd = findCommand(name); cmd == nil {
			return a.fail(usagef("", "unknown command %q", name))
		}
		runner = cmd.setup(fs)
	}
	rest := args
	if at >= 0 {
		rest = append(append([]string(nil), args[:at]...), args[at+1:]...)
	}
	positional, help, err := parseFlags(rest, fs, global)
	switch {
	case err != nil:
		return a.fail(usagef(name, "%v", err))
	case *version, name == "version" && !help:
		if len(positional) > 0 {
			return a.fail(usagef("", "version takes no arguments"))
		}
		return a.printVersion()
	case name == "help":
		return a.help(positional)
	case help && cmd != nil:
		printHelp(e.stdout, cmd)
		return exitOK
	case help:
		printOverview(e.stdout)
		return exitOK
	case cmd == nil && a.json:
		return a.fail(usagef("", "no command given"))
	case cmd == nil:
		printOverview(e.stderr)
		return exitUsage
	case a.timeout < 0:
		return a.fail(usagef("", "--timeout cannot be negative"))
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	tr, err := a.startTracing(ctx)
	if err != nil {
		return a.fail(err)
	}
	a.tracing = tr
	ctx, span := tr.start(ctx, name)
	code := a.runCommand(ctx, runner, positional)
	a.endTracing(ctx, tr, span, code)
	return code
}

// runCommand runs the command and prints its failure, before the traces are flushed.
func (a *app) runCommand(ctx context.Context, runner func(context.Context, *app, []string) error, args []string) int {
	defer a.closeFake()
	return a.fail(runner(ctx, a, args))
}

// wantsJSON reports a --json flag among the arguments, so that even an error in the other
// arguments is reported as JSON.
func wantsJSON(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		if name, value, hasValue := splitFlag(arg); name == "json" {
			if b, err := strconv.ParseBool(value); !hasValue || (err == nil && b) {
				return true
			}
		}
	}
	return false
}

// splitFlag reads "-name", "--name" or "--name=value"; name is "" for a non-flag.
func splitFlag(arg string) (name, value string, hasValue bool) {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return "", "", false
	}
	name = strings.TrimPrefix(arg[1:], "-")
	if name == "" || name[0] == '-' || name[0] == '=' {
		return "", "", false
	}
	name, value, hasValue = strings.Cut(name, "=")
	return name, value, hasValue
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// commandName finds the command: the first argument that is neither a flag nor a flag's
// value. A flag before the command may be a global one or any command's; whether it takes a
// value decides whether the next argument is its value.
func commandName(args []string, global *flag.FlagSet) (string, int) {
	takesValue := map[string]bool{}
	global.VisitAll(func(f *flag.Flag) { takesValue[f.Name] = !isBoolFlag(f) })
	for _, c := range commands() {
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) { takesValue[f.Name] = takesValue[f.Name] || !isBoolFlag(f) })
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if i+1 < len(args) {
				return args[i+1], i + 1
			}
			return "", -1
		}
		name, _, hasValue := splitFlag(arg)
		switch {
		case name == "" && arg != "-":
			return arg, i
		case name != "" && !hasValue && takesValue[name]:
			i++
		}
	}
	return "", -1
}

// parseFlags sets the flags found anywhere in args, looking them up in sets in order, and
// returns the other arguments; "--" ends the flags. help reports -h or --help.
func parseFlags(args []string, sets ...*flag.FlagSet) (positional []string, help bool, err error) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(positional, args[i+1:]...), help, nil
		}
		name, value, hasValue := splitFlag(arg)
		if name == "" {
			positional = append(positional, arg)
			continue
		}
		if name == "h" || name == "help" {
			help = true
			continue
		}
		var fs *flag.FlagSet
		var f *flag.Flag
		for _, s := range sets {
			if f = s.Lookup(name); f != nil {
				fs = s
				break
			}
		}
		if f == nil {
			return nil, help, fmt.Errorf("unknown flag --%s", name)
		}
		switch {
		case hasValue:
		case isBoolFlag(f):
			value = "true"
		case i+1 < len(args):
			i++
			value = args[i]
		default:
			return nil, help, fmt.Errorf("flag --%s needs a value", name)
		}
		if err := fs.Set(name, value); err != nil {
			if want := valueKind(f); want != "" {
				return nil, help, fmt.Errorf("invalid value %q for --%s: want %s", value, name, want)
			}
			return nil, help, fmt.Errorf("invalid value %q for --%s: %v", value, name, err)
		}
	}
	return positional, help, nil
}

// valueKind says what a flag of the flag package's own types takes, "" for other types.
func valueKind(f *flag.Flag) string {
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		return "a whole number"
	case "*flag.durationValue", "*main.durationFlag":
		return "a duration such as 30s or 10m"
	case "*flag.boolValue":
		return "true or false"
	case "*flag.float64Value":
		return "a number"
	}
	return ""
}

// durationFlag is a duration flag whose help shows its default without zero units: 168h,
// where the flag package's own shows 168h0m0s.
type durationFlag time.Duration

func (d *durationFlag) String() string {
	s := time.Duration(*d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Set reads a duration of time.ParseDuration's form.
func (d *durationFlag) Set(v string) error {
	x, err := time.ParseDuration(v)
	*d = durationFlag(x)
	return err
}

// repeatedFlag is a flag that may be given several times, each value kept as given.
type repeatedFlag []string

func (r *repeatedFlag) String() string { return strings.Join(*r, ", ") }

// Set adds a value.
func (r *repeatedFlag) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// credentialCodes are the v3 API's codes for a key or account that cannot be used: a
// configuration problem, exit code 2.
var credentialCodes = []sendloop.ErrorCode{sendloop.ErrIPNotAuthorized, sendloop.ErrInvalidAPIKey,
	sendloop.ErrTrialExpired, sendloop.ErrInvalidCredentials, sendloop.ErrUserInactive}

// smtpAuthFailed is the relay's reply to credentials it refuses.
const smtpAuthFailed = 535

// exitCode returns the exit code of an error: 2 for usage, configuration and credentials,
// 1 for any other failure.
func exitCode(err error) (code int, kind string) {
	var ue *usageError
	var ie *inputError
	var apiErr *sendloop.APIError
	var legacyErr *legacy.Error
	var smtpErr *smtp.ReplyError
	switch {
	case errors.As(err, &ue), errors.As(err, &ie):
		return exitUsage, "usage"
	case errors.As(err, &apiErr) && slices.Contains(credentialCodes, apiErr.Code),
		errors.As(err, &legacyErr) && legacyErr.Code == legacy.ErrInvalidAPIKey,
		errors.As(err, &smtpErr) && smtpErr.Code == smtpAuthFailed:
		return exitUsage, "credentials"
	}
	return exitFailure, "failure"
}

// sdkPrefix matches the packages' own prefixes ("sendloop: ", "sendloop/smtp: ") at the start
// of a message or of a wrapped one: the tool prints "sendloop: " once.
var sdkPrefix = regexp.MustCompile(`(^|: |\n)sendloop(/[a-z]+)?: `)

// cliMessage is an error's text in the tool's words: without the SDK's own prefixes.
func cliMessage(err error) string {
	msg := err.Error()
	for {
		out := sdkPrefix.ReplaceAllString(msg, "$1")
		if out == msg {
			return msg
		}
		msg = out
	}
}

// fail prints err, if any, and returns its exit code: on stderr as text, or with --json as
// one JSON object.
func (a *app) fail(err error) int {
	if err == nil {
		return exitOK
	}
	code, kind := exitCode(err)
	if c, ok := interruptedCode(a.ctx, code); ok {
		code, kind = c, "interrupted"
	}
	helpCmd := usageHelp(err)
	msg := cliMessage(err)
	if a.json {
		obj := orderedObject{{"error", msg}, {"kind", kind}, {"exit_code", code}}
		var apiErr *sendloop.APIError
		var legacyErr *legacy.Error
		var smtpErr *smtp.ReplyError
		switch {
		case errors.As(err, &apiErr):
			obj = append(obj, member{"api_command", apiErr.Command}, member{"api_error_code", int(apiErr.Code)})
		case errors.As(err, &legacyErr):
			obj = append(obj, member{"api_command", legacyErr.Command}, member{"api_error_code", int(legacyErr.Code)})
		case errors.As(err, &smtpErr):
			obj = append(obj, member{"smtp_command", smtpErr.Command}, member{"smtp_code", smtpErr.Code})
		}
		if helpCmd != "" {
			obj = append(obj, member{"help", helpCmd})
		}
		b, jerr := obj.MarshalJSON()
		if jerr == nil {
			fmt.Fprintf(a.stderr, "%s\n", b)
			return code
		}
	}
	fmt.Fprintf(a.stderr, "sendloop: %s\n", msg)
	if helpCmd != "" {
		fmt.Fprintf(a.stderr, "Run '%s' for usage.\n", helpCmd)
	}
	return code
}

// usageHelp returns the help command a usage mistake points at, "" for any other error
// (even one with exit code 2: the help would not fix it).
func usageHelp(err error) string {
	var ue *usageError
	switch {
	case !errors.As(err, &ue):
		return ""
	case ue.cmd == "":
		return "sendloop help"
	}
	return "sendloop help " + ue.cmd
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

Flags may come anywhere, before or after the command and after its arguments, with one
dash or two, as --name value or --name=value; "--" ends the flags.

Commands:
`

const overviewTail = `  version   print the version (also --version)
  help      show help for a command

Global flags:
  --json            machine-readable output: JSON on stdout, snake_case keys, and errors as
                    one JSON object on stderr
  --fake            run against an in-process fake of the service holding demo data
                    (list 1 "Demo"), instead of SENDLOOP_API_KEY's account
  --quiet           no progress and no notes on stderr (errors are still printed)
  --verbose         log every API request (command, attempt, status, duration) to stderr
  --timeout DUR     give up after DUR (e.g. 30s, 10m); default: no limit
  --otel            export traces over OTLP/HTTP (default endpoint http://localhost:4318);
                    OTEL_EXPORTER_OTLP_ENDPOINT turns it on too (see Environment)
  --version         print the version and exit

Environment:
  SENDLOOP_API_KEY         the API key (required unless --fake)
  SENDLOOP_BASE_URL        the account's host only, e.g. https://acme.sendloop.com
                           (default https://app.sendloop.com)
  SENDLOOP_INSECURE_HTTP   1 to allow a plain http SENDLOOP_BASE_URL on another host than
                           this one, e.g. a 'sendloop fake --listen-any' on a CI network
  SENDLOOP_SMTP_HOST, SENDLOOP_SMTP_PORT, SENDLOOP_SMTP_USER, SENDLOOP_SMTP_PASSWORD,
  SENDLOOP_SMTP_CA_FILE    the relay, for send (see 'sendloop help send')
  SENDLOOP_JOURNAL_URL     a PostgreSQL database (postgres://user:password@host/db) of send
                           journals: --journal NAME names one in it (see 'sendloop help send')
  SENDLOOP_STATE_URL       a PostgreSQL database of sync states: --state NAME names one in
                           it (see 'sendloop help sync'); the password of either is never
                           printed
  SENDLOOP_FAKE_URL, SENDLOOP_FAKE_KEY
                           a running fake's control API, for 'sendloop fake messages' and
                           its other subcommands (see 'sendloop help fake')
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
                           a collector: each command sends its spans there over OTLP/HTTP
                           (a span for the command, one per API call and relay message);
                           OTEL_EXPORTER_OTLP_HEADERS for its credentials,
                           OTEL_TRACES_EXPORTER=none to turn it off, OTEL_SERVICE_NAME
                           (default sendloop); OTEL_EXPORTER_OTLP_PROTOCOL, if set, must be
                           http/protobuf

Progress is drawn on stderr when it is a terminal (not with TERM=dumb, a pipe or a file).

Exit status:
  0    done
  1    some rows failed (rejected or refused; sync: beyond --max-rejects), or any other
       failure
  2    usage, configuration or credentials: an unknown command or flag, a bad value, an
       unreadable file, a CSV header that does not fit the list, an unset or invalid
       variable, a key or account the service refuses (API codes 103, 104, 147, 148,
       149; legacy code 2), relay credentials refused (SMTP 535)
  130  interrupted by SIGINT (Ctrl-C)
  143  interrupted by SIGTERM (Windows: the console window closed)

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
