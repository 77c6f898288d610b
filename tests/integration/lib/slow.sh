# lib/slow.sh: slow-client attacks on httpd for tests 39 and 40 (sourced
# after lib/net.sh).
#
# Offers:
#   SLOW_MODES               the three attacks, one word each (see slow_mode)
#   slow_mode MODE           sets SLOW_ARGS (slowhttptest's options), SLOW_PATH
#                            (what it asks for) and SLOW_PERCENT (that share
#                            of the probes must be answered, each within the
#                            probe's 5 s) for MODE
#   slow_attack HOST PORT    runs slowhttptest (through $NET_EXEC) with SLOW_ARGS
#                            against http://HOST:PORT$SLOW_PATH while
#                            slowprobe.py fetches / there once a second, until
#                            slowhttptest ends: when
#                            the server has ended every one of its connections,
#                            or at its -l bound. Sets SLOW_HELD (most of
#                            its connections established at once, as the
#                            client's kernel saw them), SLOW_EXIT (its exit reason), SLOW_PROBES
#                            (the probe's summary line), SLOW_WORST; returns 1
#                            with SLOW_FAILED set unless the probes met the
#                            mode's bound and the server ended every connection
#   slow_counter LINE NAME   a number from httpd's "httpd: accepted ..." line:
#                            accepted, at-most, head, head-408, body, answer,
#                            evicted, evicted-heads
#   slow_check MODE LINE     asserts what the mode must have made httpd count
#                            (LINE: its "httpd: accepted" line at exit)
#   slow_figures GUEST MODE LINE   one "figures:" line for docs/hardening.md
#
# Each attack lasts as long as the server lets it: slowhttptest stops when
# all its connections are closed. With httpd's defaults (head and stall
# deadlines of 20 s) that is about 25 s after it starts; -l 90 only bounds a
# server that never ends them (the old httpd), or a guest whose clock runs
# slow (a TSC calibrated too fast makes its 20 s last longer).

SLOW_MODES="slowloris-1000 slowloris-1500 slowread-500"

slow_mode() {
	local common="-i 10 -r 200 -p 3 -l 90"
	case $1 in
	slowloris-1000) # below httpd's limit of 1024: no slot is short
		SLOW_ARGS="-H -c 1000 -t GET -x 24 $common" SLOW_PATH=/ SLOW_PERCENT=100 ;;
	slowloris-1500) # past the limit and past the unikernel's 1,152 pcbs
		SLOW_ARGS="-H -c 1500 -t GET -x 24 $common" SLOW_PATH=/ SLOW_PERCENT=90 ;;
	slowread-500) # 1 MiB answers read 32 bytes every 5 s through a window of 0.5-1 KiB
		SLOW_ARGS="-X -c 500 -w 512 -y 1024 -n 5 -z 32 -k 3 $common" SLOW_PATH=/bytes/1048576
		SLOW_PERCENT=100 ;;
	*) fail "no slow mode $1" ;;
	esac
}

# slow_sockets HOST STATE: how many of slowhttptest's TCP sockets to HOST
# the client's kernel holds in STATE.
slow_sockets() {
	"${NET_EXEC[@]}" ss -Htnp state "$2" "dst $1" | grep -c '"slowhttptest"'
}

slow_attack() {
	local host=$1 port=$2 tmp rc=0 n est ended=0
	tmp=$(mktemp -d)
	# slowhttptest needs a descriptor per connection.
	"${NET_EXEC[@]}" bash -c "ulimit -n 8192 && exec slowhttptest $SLOW_ARGS -u http://$host:$port$SLOW_PATH" \
		>"$tmp/slow" 2>&1 &
	local spid=$!
	"${NET_EXEC[@]}" python3 "$ROOT/tests/integration/lib/slowprobe.py" "$host" "$port" "$tmp/stop" 100 \
		>"$tmp/probe" 2>&1 &
	local ppid=$!
	# The attack is over when the server has ended its connections: the
	# client's kernel holds none of slowhttptest's established, nor any
	# still connecting (a SYN the server dropped is sent again after 1, 3,
	# 7 s and then gets its own deadline). A slow reader may still be
	# reading what it had, so slowhttptest itself cannot tell. Only its
	# sockets count: an allowance for the probe's would let an attack
	# connection the server has yet to end pass for one, and cancelling it
	# then leaves it uncounted by the server.
	SLOW_HELD=0
	for n in $(seq 1 100); do
		sleep 1
		kill -0 "$spid" 2>/dev/null || break
		est=$(slow_sockets "$host" established)
		[ "$est" -gt "$SLOW_HELD" ] && SLOW_HELD=$est
		if [ "$SLOW_HELD" -ge 100 ] && [ "$est" = 0 ] &&
			[ "$(slow_sockets "$host" syn-sent)" = 0 ]; then
			ended=1
			kill -INT "$spid" 2>/dev/null
			break
		fi
	done
	wait "$spid" || rc=$?
	touch "$tmp/stop"
	wait "$ppid"
	sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$tmp/slow" | tr -d '\r' >"$tmp/slow.txt"
	SLOW_PROBES=$(tail -n 1 "$tmp/probe")
	SLOW_EXIT=$(sed -n 's/^Exit status: *//p' "$tmp/slow.txt" | tail -n 1)
	SLOW_WORST=$(sed -n 's/.*worst \([0-9.]*\) s$/\1/p' <<<"$SLOW_PROBES")
	[ "$SLOW_EXIT" = "No open connections left" ] && ended=1
	echo "slowhttptest $SLOW_ARGS on $SLOW_PATH: exit $rc, '$SLOW_EXIT' after ${n}s;" \
		"at most $SLOW_HELD connections established"
	echo "probe: $SLOW_PROBES"
	# What the probes tell apart is a server that serves a normal client
	# beside the attack from one starved by it: a starved one answers only
	# once the attack's connections end, 20 s later, or never. How quickly
	# it answers is the machine's speed as much as the server's (a loaded
	# 2-core host saw 1.07 s), so the bound is the probe's own 5 s; the
	# latencies are in the figures line.
	local count unanswered
	count=$(sed -n 's/^probes \([0-9]*\);.*/\1/p' <<<"$SLOW_PROBES")
	unanswered=$(sed -n 's/.*unanswered \([0-9]*\);.*/\1/p' <<<"$SLOW_PROBES")
	SLOW_FAILED=""
	if [ -z "$count" ] || [ -z "$unanswered" ] || [ "$count" -lt 5 ] ||
		[ $(((count - unanswered) * 100)) -lt $((count * SLOW_PERCENT)) ]; then
		grep -v ' ok$' "$tmp/probe" | head -n 40
		SLOW_FAILED="only $((${count:-0} - ${unanswered:-0})) of ${count:-0} probes answered within 5 s (want $SLOW_PERCENT%)"
	elif [ $ended = 0 ]; then
		SLOW_FAILED="the server did not end every slow connection (slowhttptest: '$SLOW_EXIT')"
	fi
	[ -n "$SLOW_FAILED" ] && tail -n 12 "$tmp/slow.txt"
	rm -rf "$tmp"
	[ -z "$SLOW_FAILED" ]
}

slow_counter() {
	local line=$1 name=$2 re
	case $name in
	accepted) re='accepted \([0-9]*\),' ;;
	at-most) re='at most \([0-9]*\) at once' ;;
	head) re='head deadline \([0-9]*\) ' ;;
	head-408) re='(\([0-9]*\) answered 408)' ;;
	body) re='body stalled \([0-9]*\),' ;;
	answer) re='answer stalled \([0-9]*\);' ;;
	evicted) re='evicted \([0-9]*\) (' ;;
	evicted-heads) re='(heads \([0-9]*\),' ;;
	evicted-answers) re='answers \([0-9]*\), closing' ;;
	*) fail "no counter $name" ;;
	esac
	sed -n "s/.*$re.*/\1/p" <<<"$line" | head -n 1
}

slow_check() {
	local mode=$1 line=$2
	local head h408 evicted eheads answer eanswers atmost
	[ -n "$line" ] || fail "httpd printed no counters"
	head=$(slow_counter "$line" head) h408=$(slow_counter "$line" head-408)
	evicted=$(slow_counter "$line" evicted) eheads=$(slow_counter "$line" evicted-heads)
	answer=$(slow_counter "$line" answer) eanswers=$(slow_counter "$line" evicted-answers)
	atmost=$(slow_counter "$line" at-most)
	case $mode in
	slowloris-1000)
		[ "$h408" -ge 1000 ] || fail "$mode: $h408 heads answered 408 at the deadline, want all 1000"
		[ "$evicted" = 0 ] || fail "$mode: $evicted evictions below the connection limit"
		;;
	slowloris-1500)
		[ "$eheads" -ge 1 ] || fail "$mode: no head evicted past the connection limit"
		[ $((head + evicted)) -ge 1500 ] || fail "$mode: only $head deadline closes + $evicted evictions for 1500"
		[ "$atmost" -le 1024 ] || fail "$mode: $atmost connections at once, past the limit"
		;;
	slowread-500)
		[ $((answer + eanswers)) -ge 500 ] || fail "$mode: only $answer stalled answers ended (+ $eanswers evicted) for 500"
		;;
	esac
}

slow_figures() {
	local guest=$1 mode=$2 line=$3
	echo "figures: $guest $mode: slowhttptest held at most ${SLOW_HELD:-?}, httpd at most" \
		"$(slow_counter "$line" at-most) at once; deadline closes: heads $(slow_counter "$line" head)," \
		"answers $(slow_counter "$line" answer); evicted $(slow_counter "$line" evicted);" \
		"worst probe ${SLOW_WORST:-?} s ($SLOW_PROBES)"
}
