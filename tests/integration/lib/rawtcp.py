"""rawtcp.py: a TCP client made by hand, for tests that play a hostile peer.

The attack tests need segments no kernel socket would send: data past the
receiver's window, a zero window while data keeps coming, one byte a segment.
So this client speaks Ethernet itself, on an AF_PACKET socket bound to the
test namespace's tap (where the guest's frames arrive and from where ours go
to it), from an address of the namespace's /24 that no kernel socket owns and
a MAC address of its own. The namespace's kernel drops the guest's frames to
that address unread (they are for another MAC address than the tap's), so it
resets nothing and no firewall rule is needed; this client answers the
guest's ARP requests for the address itself. Standard library only; run it
as root inside the namespace.

  link = Link("tap0", "192.0.2.50", "192.0.2.2")   # resolves the guest's MAC
  c = Connection(link, 80)
  c.connect(window=0)                # SYN offering window scaling, handshake
  c.send(b"GET / HTTP/1.1\\r\\n\\r\\n")  # at snd_nxt; seq=, flags=, window= to choose
  c.wait_acked(c.snd_nxt, 5)         # reads the guest's segments meanwhile
  c.push(start, [1400] * 100)        # many segments, in bursts, resent as needed
  c.right_edge()                     # the guest's ack + its scaled window
  c.reset()

Several Connections may share one Link, each from a source port of its own
(sport=): each takes only its own segments from the Link, and those of the
others wait there until their poll (or their push, wait_acked, connect).

A Connection tracks what the guest said last (its ack, its window, scaled as
its SYN-ACK's option says, its next sequence number) and, when asked to
(auto_ack, the default), answers each segment of the guest's that carries
data (a zero-window probe, say) with an ACK of what it has taken so far:
nothing beyond the guest's SYN, since these tests never read.
Only addresses inside the test's own namespace may be used.
"""
import errno
import random
import socket
import struct
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
PACKET_OUTGOING = 4

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10

BROADCAST = b"\xff" * 6


def seq_add(a, n):
    return (a + n) & 0xFFFFFFFF


def seq_diff(a, b):
    """a - b as a signed distance in sequence space."""
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d >= 1 << 31 else d


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class Segment:
    """One TCP segment the guest sent: header fields, options, payload."""

    def __init__(self, src, dst, tcp):
        self.src, self.dst = src, dst
        (self.sport, self.dport, self.seq, self.ack, off, self.flags,
         self.window) = struct.unpack("!HHIIBBH", tcp[:16])
        hlen = (off >> 4) * 4
        self.options = parse_options(tcp[20:hlen])
        self.payload = tcp[hlen:]

    def __repr__(self):
        names = "".join(n for bit, n in ((SYN, "S"), (FIN, "F"), (RST, "R"), (PSH, "P"), (ACK, "."))
                        if self.flags & bit)
        return (f"<{self.sport} > {self.dport} [{names}] seq {self.seq} ack {self.ack} "
                f"win {self.window} len {len(self.payload)}>")


def parse_options(raw):
    """{kind: value bytes} of a TCP options field."""
    opts, i = {}, 0
    while i < len(raw):
        kind = raw[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(raw) or raw[i + 1] < 2:
            break
        opts[kind] = raw[i + 2:i + raw[i + 1]]
        i += raw[i + 1]
    return opts


class Link:
    """Ethernet on one interface, as the address my_ip with the MAC my_mac."""

    def __init__(self, ifname, my_ip, peer_ip, my_mac=b"\x02\x00\xc0\x00\x02\x32"):
        self.my_ip, self.peer_ip = socket.inet_aton(my_ip), socket.inet_aton(peer_ip)
        self.my_mac, self.peer_mac = my_mac, None
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((ifname, 0))
        self.ident = random.randrange(1 << 16)
        self.pending = []  # TCP segments read while waiting for something else
        self.resolve()

    def send_frame(self, dst_mac, ethertype, payload):
        frame = dst_mac + self.my_mac + struct.pack("!H", ethertype) + payload
        frame += b"\0" * max(0, 60 - len(frame))
        while True:
            try:
                self.sock.send(frame)
                return
            except OSError as e:  # the tap's queue is full: a moment
                if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                time.sleep(0.001)

    def arp(self, op, target_mac, target_ip, dst_mac):
        body = (struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, op) + self.my_mac + self.my_ip
                + target_mac + target_ip)
        self.send_frame(dst_mac, ETH_P_ARP, body)

    def resolve(self, timeout=10):
        """Ask the peer for its MAC address (which also puts ours in its
        ARP table), until it answers."""
        end = time.monotonic() + timeout
        while self.peer_mac is None:
            if time.monotonic() > end:
                raise TimeoutError("no ARP reply from the peer")
            self.arp(1, b"\0" * 6, self.peer_ip, BROADCAST)
            self.read(0.5, until=lambda: self.peer_mac is not None)

    def send_ip(self, proto, payload):
        self.ident = (self.ident + 1) & 0xFFFF
        hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), self.ident, 0x4000, 64,
                          proto, 0, self.my_ip, self.peer_ip)
        hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
        self.send_frame(self.peer_mac, ETH_P_IP, hdr + payload)

    def read(self, timeout, until=lambda: False):
        """Reads frames for at most `timeout` seconds or until `until()`:
        answers ARP requests for my_ip, learns the peer's MAC from its ARP
        reply, keeps the peer's TCP segments to my_ip in self.pending."""
        end = time.monotonic() + timeout
        while not until():
            left = end - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                frame, addr = self.sock.recvfrom(1 << 17)
            except socket.timeout:
                return
            if addr[2] == PACKET_OUTGOING or len(frame) < 14:
                continue
            ethertype = struct.unpack("!H", frame[12:14])[0]
            if ethertype == ETH_P_ARP and len(frame) >= 42:
                op = struct.unpack("!H", frame[20:22])[0]
                sender_mac, sender_ip, target_ip = frame[22:28], frame[28:32], frame[38:42]
                if op == 1 and target_ip == self.my_ip and sender_ip == self.peer_ip:
                    self.arp(2, sender_mac, sender_ip, sender_mac)
                elif op == 2 and sender_ip == self.peer_ip and target_ip == self.my_ip:
                    self.peer_mac = sender_mac
                continue
            if ethertype != ETH_P_IP:
                continue
            ip = frame[14:]
            if (len(ip) < 20 or ip[9] != socket.IPPROTO_TCP or ip[12:16] != self.peer_ip
                    or ip[16:20] != self.my_ip):
                continue
            total = struct.unpack("!H", ip[2:4])[0]
            ihl = (ip[0] & 0xF) * 4
            tcp = ip[ihl:total if total >= ihl + 20 else len(ip)]  # a merged frame may say 0
            if len(tcp) >= 20:
                self.pending.append(Segment(ip[12:16], ip[16:20], tcp))


class Connection:
    """One TCP connection from the Link's address to the peer's dport."""

    def __init__(self, link, dport, sport=None, iss=None, wscale=7, mss=1460):
        self.link, self.dport = link, dport
        self.sport = sport if sport is not None else random.randrange(20000, 60000)
        self.iss = iss if iss is not None else random.getrandbits(32)
        self.my_wscale, self.mss = wscale, mss
        self.snd_nxt = self.snd_una = self.iss
        self.rcv_nxt = None         # the guest's next sequence number we take (its ISS + 1)
        self.peer_wscale = 0
        self.peer_ack = None        # the ack field of the guest's last segment
        self.peer_window = 0        # its window field, scaled
        self.peer_max_seq = None    # the end of the furthest data it sent
        self.window = 65535         # what we advertise, in bytes
        self.auto_ack = True
        self.reset_by_peer = False
        self.received = []          # every segment of this connection, in order

    # -- sending --------------------------------------------------------------
    def segment(self, seq, ack, flags, window, payload=b"", options=b""):
        if len(options) % 4:
            options += b"\1" * (4 - len(options) % 4)
        shift = 0 if flags & SYN else self.my_wscale
        win = min(window >> shift, 0xFFFF)
        tcp = struct.pack("!HHIIBBHHH", self.sport, self.dport, seq, ack if flags & ACK else 0,
                          (5 + len(options) // 4) << 4, flags, win, 0, 0) + options + payload
        pseudo = self.link.my_ip + self.link.peer_ip + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp)) + tcp[18:]
        self.link.send_ip(socket.IPPROTO_TCP, tcp)

    def send(self, payload=b"", seq=None, flags=None, window=None, ack=None):
        """Sends one segment: ACK, PSH with data, our window, acking rcv_nxt
        unless told otherwise. Without `seq` it goes at snd_nxt, which moves
        past it; with one, snd_nxt stays where it was (the caller keeps
        count of what it sends out of order)."""
        if flags is None:
            flags = ACK | (PSH if payload else 0)
        at = self.snd_nxt if seq is None else seq
        self.segment(at, self.rcv_nxt if ack is None else ack, flags,
                     self.window if window is None else window, payload)
        if seq is None:
            self.snd_nxt = seq_add(at, len(payload) + (1 if flags & (SYN | FIN) else 0))

    def ack_now(self):
        self.segment(self.snd_nxt, self.rcv_nxt, ACK, self.window)

    def reset(self):
        """An RST at the sequence number the guest expects (its last ack)."""
        seq = self.peer_ack if self.peer_ack is not None else self.snd_nxt
        self.segment(seq, self.rcv_nxt, RST | ACK, 0)

    # -- receiving ------------------------------------------------------------
    def take(self, seg):
        self.received.append(seg)
        if seg.flags & RST:
            self.reset_by_peer = True
            return
        if seg.flags & ACK:
            if self.peer_ack is None or seq_diff(seg.ack, self.peer_ack) >= 0:
                self.peer_ack = seg.ack
                if seq_diff(seg.ack, self.snd_una) > 0:
                    self.snd_una = seg.ack
            self.peer_window = seg.window << (0 if seg.flags & SYN else self.peer_wscale)
        end = seq_add(seg.seq, len(seg.payload) + (1 if seg.flags & (SYN | FIN) else 0))
        if self.peer_max_seq is None or seq_diff(end, self.peer_max_seq) > 0:
            self.peer_max_seq = end
        if self.auto_ack and self.rcv_nxt is not None and (seg.payload or seg.flags & FIN):
            self.ack_now()

    def mine(self, seg):
        """Whether the guest's segment `seg` belongs to this connection."""
        return seg.sport == self.dport and seg.dport == self.sport

    def poll(self, timeout=0.0, until=lambda: False):
        """Reads the guest's segments for at most `timeout` seconds, or
        until `until()` holds after one of them."""
        end = time.monotonic() + timeout
        while True:
            mine = [s for s in self.link.pending if self.mine(s)]
            self.link.pending = [s for s in self.link.pending if not self.mine(s)]
            for s in mine:
                self.take(s)
            left = end - time.monotonic()
            if until() or self.reset_by_peer or left <= 0:
                return
            # Until a segment of this connection's comes: those of others
            # on the same Link wait in link.pending for their own poll.
            self.link.read(left, until=lambda: any(self.mine(s) for s in self.link.pending))

    def wait_acked(self, seq, timeout):
        """Whether the guest acknowledges everything before `seq` within `timeout` s."""
        self.poll(timeout, until=lambda: seq_diff(self.snd_una, seq) >= 0)
        return seq_diff(self.snd_una, seq) >= 0

    def push(self, start, sizes, fill=b"x", burst=16, timeout=3.0, stall_limit=3, stop=lambda: False):
        """Sends pieces of the given sizes back to back from sequence number
        `start`, `burst` at a time; after each burst waits (up to `timeout`
        s) for the guest to acknowledge it, and sends the next from wherever
        the guest's ack then stands (go-back-N: what it dropped goes again).
        Stops once every piece is acknowledged, once `stall_limit` bursts in
        a row moved the ack no further (the guest stopped taking data), or
        when stop() holds. Returns the bytes acknowledged from `start`.
        snd_nxt is left alone."""
        pieces, at = [], start
        for n in sizes:
            pieces.append((at, n))
            at = seq_add(at, n)
        i, stalls = 0, 0
        while i < len(pieces) and stalls < stall_limit and not stop():
            group = pieces[i:i + burst]
            before = self.snd_una
            for seq, n in group:
                self.send((fill * n)[:n], seq=seq)
            self.wait_acked(seq_add(*group[-1]), timeout)
            stalls = 0 if seq_diff(self.snd_una, before) > 0 else stalls + 1
            while i < len(pieces) and seq_diff(self.snd_una, seq_add(*pieces[i])) >= 0:
                i += 1
        return max(0, min(seq_diff(self.snd_una, start), seq_diff(at, start)))

    def right_edge(self):
        """The sequence number just past the guest's advertised window."""
        return seq_add(self.peer_ack, self.peer_window)

    def connect(self, window=65535, timeout=10):
        """The handshake: a SYN offering MSS and window scaling (sent again
        each second until the SYN-ACK), then an ACK advertising `window`."""
        opts = struct.pack("!BBH", 2, 4, self.mss) + bytes([1, 3, 3, self.my_wscale])
        end = time.monotonic() + timeout
        synack = None
        while synack is None:
            if time.monotonic() > end:
                raise TimeoutError(f"no SYN-ACK from port {self.dport}")
            self.segment(self.iss, 0, SYN, 65535, options=opts)
            self.poll(1.0, until=lambda: any(s.flags & SYN for s in self.received))
            if self.reset_by_peer:
                raise ConnectionRefusedError(f"port {self.dport} reset the SYN")
            synack = next((s for s in self.received if s.flags & SYN and s.flags & ACK), None)
        if synack.ack != seq_add(self.iss, 1):
            raise ConnectionError(f"SYN-ACK acknowledges {synack.ack}, not {seq_add(self.iss, 1)}")
        self.snd_nxt = self.snd_una = seq_add(self.iss, 1)
        self.rcv_nxt = seq_add(synack.seq, 1)
        if 3 in synack.options:  # both offered it: both scale
            self.peer_wscale = min(synack.options[3][0], 14)
        else:
            self.my_wscale = 0
        self.window = window
        self.ack_now()
        return synack


def neighbour_address(peer_ip, host=50):
    """An address of peer_ip's /24 for the hand-made client (.50 unless told)."""
    return peer_ip.rsplit(".", 1)[0] + f".{host}"


if __name__ == "__main__":
    raise SystemExit(__doc__)
