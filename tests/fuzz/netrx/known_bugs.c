/*
 * known_bugs.c: stand-ins that steer the netrx harness around bugs it has
 * found in code it may not change, so that fuzzing goes on finding others.
 * Each has a switch in tests/fuzz/fuzz.mk (NETRX_BUG_*) and its reproducer in
 * tests/fuzz/regress/netrx; once the bug is fixed, empty the switch and the
 * replay of that reproducer in make test guards the fix.
 *
 * 1. net/socket.c, egress_one(): close() of a connection whose receive
 *    window is not whole. lwIP's tcp_close() then resets the connection and
 *    frees the pcb before it returns (tcp_close_shutdown, "RST on unacked
 *    data"), but egress_one goes on with detach_pcb(s), which writes the
 *    callbacks into the freed pcb, and may call tcp_output(pcb) on it: a
 *    use after free (regress/netrx/close-after-syn-in-handshake-ack). A peer
 *    gets there by setting SYN on the segment that completes the handshake:
 *    lwIP counts the SYN as a byte of sequence space, the window shrinks by
 *    one and no tcp_recved() ever gives it back.
 *    Stand-in (NETRX_BUG_CLOSE_UAF: -Dtcp_close=netrx_tcp_close for our
 *    sources, not for lwIP's own calls): before closing, open the window
 *    back to its whole size, so lwIP takes its ordinary FIN path and the pcb
 *    outlives the call.
 *
 * 2. lwIP 2.1.3, tcp_receive(): a segment of one sequence number (one byte,
 *    or a bare SYN or FIN) whose sequence number lies exactly 2^31 from
 *    rcv_nxt passes TCP_SEQ_BETWEEN(rcv_nxt, seqno + 1, seqno + tcplen - 1)
 *    by wrap-around, and the trimming that follows asserts "insane offset!"
 *    (tcp_in.c:1430): a panic of the guest, from any peer that completes a
 *    handshake, or in the handshake's ACK itself
 *    (regress/netrx/seq-half-space-from-rcv-nxt). Without assertions lwIP
 *    would take the segment as starting at rcv_nxt.
 *    Stand-in (NETRX_BUG_SEQ_HALF, which makes tests/fuzz/netrx/lwipopts.h
 *    put netrx_tcp_inpacket in front of the guest's TCP hook): drop such a
 *    segment before lwIP looks at it. The same test belongs at the top of
 *    net_tcp_inpacket in net/tcp_hooks.c.
 *
 * 3. net/socket.c, egress_one(): a peer whose MSS option or window is
 *    small makes lwIP cut what we write into small segments (tcp_write uses
 *    min(mss, snd_wnd_max / 2)); a piece of up to 64 KiB then needs more
 *    segments than lwIP's queue holds (TCP_SND_QUEUELEN, 64), and tcp_write
 *    refuses all of it with ERR_MEM. Nothing is queued, so egress_one lists
 *    the socket again and the next poll tries the same piece: the network
 *    always has work, the executor never parks (100% CPU), and the data
 *    never leaves (regress/netrx/tiny-mss-write-spin, a client with MSS 1;
 *    regress/netrx/tiny-window-write-spin, a peer we connected to offering a
 *    window of 196 bytes). The fix: on ERR_MEM with nothing queued, try a
 *    smaller piece.
 *    Stand-in (NETRX_BUG_WRITE_SPIN, in fuzz_netrx.c's pump()): a poll loop
 *    in which every turn is such a failed tcp_write stops after 100 turns
 *    instead of being reported as a livelock.
 *
 * 4. net/socket.c, shutdown(SHUT_WR) then the peer's FIN: the pcb goes to
 *    TIME_WAIT (or CLOSING, then TIME_WAIT) while the socket still points
 *    to it, and lwIP frees a TIME_WAIT pcb when 2 * TCP_MSL (2 s) is over
 *    without calling any callback. A socket closed, read or asked about
 *    after that uses the freed pcb (regress/netrx/half-close-outlives-
 *    timewait: unread data, then close() 4 s later: tcp_recved in
 *    drop_unread). The fix: in on_recv, when the FIN arrives and ours has
 *    been sent, detach the pcb.
 *    Stand-in (NETRX_BUG_TIMEWAIT_UAF, in fuzz_netrx.c's pump()): a
 *    TIME_WAIT pcb that still has a socket as its callback argument has its
 *    timer restarted before every poll, so it outlives the socket.
 */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "tests/fuzz/netrx/lwip_hooks.h"

#undef tcp_close
err_t tcp_close(struct tcp_pcb *pcb);
err_t netrx_tcp_close(struct tcp_pcb *pcb);

err_t netrx_tcp_close(struct tcp_pcb *pcb)
{
	if ((pcb->state == ESTABLISHED || pcb->state == CLOSE_WAIT) && pcb->rcv_wnd != TCP_WND_MAX(pcb))
		pcb->rcv_wnd = TCP_WND_MAX(pcb);
	return tcp_close(pcb);
}

err_t netrx_tcp_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen,
			 u16_t opt1len, u8_t *opt2, struct pbuf *p)
{
	/* A listening pcb has no rcv_nxt; TIME_WAIT does not trim. */
	if (pcb->state != LISTEN && pcb->state != TIME_WAIT) {
		/* What tcp_input computes: data plus one for SYN or FIN. */
		u32_t len = p->tot_len + ((TCPH_FLAGS(hdr) & (TCP_SYN | TCP_FIN)) ? 1 : 0);
		u32_t seqno = hdr->seqno; /* host order by now */
		if (len > 0 && TCP_SEQ_BETWEEN(pcb->rcv_nxt, seqno + 1, seqno + len - 1) &&
		    pcb->rcv_nxt - seqno >= 0xffff)
			return ERR_ABRT; /* dropped: tcp_input frees it */
	}
	return net_tcp_inpacket(pcb, hdr, optlen, opt1len, opt2, p);
}
