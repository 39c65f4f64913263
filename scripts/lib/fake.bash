# fake.bash: starts and stops `sendloop fake` for the bench scripts. Sourced, not run; the
# script sets $bin (the CLI) and $dir (a scratch directory) first.
#
# Every start gets a fresh settings file: a redirect to a reused file is truncated only
# once the background process starts, so a poll could read the previous fake's settings
# and time a run against its closed port ("connection refused"). A start waits until the
# fake accepts connections on its printed address and fails the script loudly when it does
# not; fake_check fails it when the fake died during a run, whose time would mean nothing.

fake_pid=
fake_starts=0
fake_env=
fake_log=
fake_hwm_kb=0

# start_fake [--quiet] [FAKE FLAG...]: starts a fake with the demo data on free ports and
# exports its settings (SENDLOOP_BASE_URL, SENDLOOP_API_KEY).
start_fake() {
	local global=()
	if [ "${1:-}" = --quiet ]; then
		global=(--quiet)
		shift
	fi
	fake_starts=$((fake_starts + 1))
	fake_env=$dir/fake-$fake_starts.env
	fake_log=$dir/fake-$fake_starts.log
	unset SENDLOOP_BASE_URL SENDLOOP_API_KEY
	"$bin" ${global[@]+"${global[@]}"} fake --addr 127.0.0.1:0 --smtp-addr 127.0.0.1:0 "$@" >"$fake_env" 2>"$fake_log" &
	fake_pid=$!
	local _
	for _ in $(seq 150); do
		kill -0 "$fake_pid" 2>/dev/null || fake_failed "it exited before serving"
		if grep -q '^export SENDLOOP_SMTP_CA_FILE=' "$fake_env" 2>/dev/null; then
			# shellcheck disable=SC1090
			. "$fake_env"
			if fake_listens "$SENDLOOP_BASE_URL"; then
				export SENDLOOP_BASE_URL SENDLOOP_API_KEY
				return 0
			fi
		fi
		sleep 0.1
	done
	fake_failed "it did not accept connections within 15 s"
}

# fake_listens URL: whether something accepts TCP connections at URL's host and port.
fake_listens() {
	local hostport=${1#*://}
	hostport=${hostport%%/*}
	[ -n "$hostport" ] && (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null
}

# fake_check: fails the script when the fake is no longer running or listening.
fake_check() {
	kill -0 "$fake_pid" 2>/dev/null || fake_failed "it died during the run"
	fake_listens "$SENDLOOP_BASE_URL" || fake_failed "it stopped listening during the run"
}

# fake_failed REASON: says why the fake is unusable, shows its log, and exits.
fake_failed() {
	echo "$(basename "$0"): the fake (start $fake_starts, settings $fake_env) is unusable: $1; its stderr:" >&2
	tail -n 20 "$fake_log" >&2 || true
	if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; fi
	fake_pid=
	exit 1
}

# stop_fake: stops the fake; sets fake_hwm_kb to its peak RSS (Linux).
stop_fake() {
	fake_hwm_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$fake_pid/status" 2>/dev/null || echo 0)
	kill "$fake_pid"
	wait "$fake_pid" 2>/dev/null || true
	fake_pid=
}
