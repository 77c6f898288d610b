# tools/lib/netns.sh: where a server is reached: a private network namespace
# with a tap device for QEMU, or a free port on 127.0.0.1 (sourced; bash).
#
# Offers:
#   netns_usable          whether namespaces can be made here
#   netns_create NAME     create NAME with lo up and tap device $NETNS_TAP
#                         holding $NETNS_HOST_IP/24, up
#   netns_destroy NAME    delete it (and so its tap); quiet if already gone
#   netns_exec NAME CMD   run CMD inside it
#   free_port             a TCP port no socket uses at 127.0.0.1, below the
#                         ephemeral range (for --hostfwd or a native server);
#                         false, with a message, when none turned up
# QEMU opens the tap from inside the namespace (run it with netns_exec); the
# guest takes $NETNS_GUEST_IP, given by the kernel options in $NETNS_GUEST_NET
# (address, gateway, mask). Every address used lies in 192.0.2.0/24
# (TEST-NET-1) and exists only inside the namespace, so no traffic can leave
# it.
# Needs root (CAP_NET_ADMIN) and the ip tool (iproute2).

NETNS_TAP=tap0
NETNS_HOST_IP=192.0.2.1
NETNS_GUEST_IP=192.0.2.2
NETNS_MASK=255.255.255.0
NETNS_GUEST_NET="ip=$NETNS_GUEST_IP gw=$NETNS_HOST_IP mask=$NETNS_MASK"
# The load generators run in the namespace. A client that closes first
# (wrk with `Connection: close` reads the answer and closes before the
# server's FIN is in) keeps each connection in TIME_WAIT for 60 s, and the
# guest's address and port never change, so a few loads of new connections
# fill the default ephemeral range (28,232 ports): connect() then spends
# milliseconds of CPU searching it (measured: ab took 5.5 ms of CPU per
# request at -c 16, 172 requests/s instead of ~7,000, after the same
# namespace's wrk loads). So the namespace has a wide range and at most
# this many TIME_WAIT sockets (more are closed at once, as Linux does past
# tcp_max_tw_buckets); the guest's own TIME_WAIT is the server's and stays.
# The range stops at NETNS_CLIENT_PORT_MAX: the ports above it are never
# handed out, so a test that binds its own client port there (test 21)
# cannot meet a port an earlier load left in TIME_WAIT.
# Both sysctls are the namespace's own: the host's are untouched.
NETNS_CLIENT_TW_MAX=${NETNS_CLIENT_TW_MAX:-4096}
NETNS_CLIENT_PORT_MAX=60999

# Whether namespaces can be made here (root, ip, /dev/net/tun).
netns_usable() {
	[ "$(id -u)" = 0 ] && command -v ip >/dev/null && [ -c /dev/net/tun ]
}

netns_create() {
	local ns=$1
	ip netns add "$ns" || return 1
	if ! { ip netns exec "$ns" ip link set lo up &&
		ip netns exec "$ns" ip tuntap add dev "$NETNS_TAP" mode tap &&
		ip netns exec "$ns" ip addr add "$NETNS_HOST_IP/24" dev "$NETNS_TAP" &&
		ip netns exec "$ns" ip link set "$NETNS_TAP" up &&
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="1024 $NETNS_CLIENT_PORT_MAX" \
			net.ipv4.tcp_max_tw_buckets="$NETNS_CLIENT_TW_MAX"; }; then
		ip netns del "$ns" 2>/dev/null
		return 1
	fi
}

netns_destroy() {
	local ns=$1
	[ -n "$ns" ] || return 0
	ip netns del "$ns" 2>/dev/null || true
}

netns_exec() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}

free_port() {
	local p lo
	# Below the ephemeral range, where no client's socket takes it between
	# this look and the bind; and no socket at all on it, in any state.
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
	[ "${lo:-0}" -gt 21024 ] || lo=32768
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % (lo - 20000)))
		[ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ] && { echo $p; return 0; }
	done
	echo "free_port: no free TCP port at 127.0.0.1 in 50 tries" >&2
	return 1
}
