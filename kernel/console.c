/*
 * console.c: the serial console on COM1 (115200 8N1), and kprintf, a small
 * formatter that needs no heap, so it works before memory is set up and inside
 * the panic handler. Output is polled. Input, once console_input_init() has
 * routed the UART's interrupt, lands in a small ring from the handler. Two
 * keys are taken out of the stream: the status key (Ctrl-T, as on BSD) asks
 * the kernel to print its counters, which is how the benchmark collects them
 * between loads; the interrupt key (Ctrl-C) posts SIGINT to the app, as a
 * terminal's line discipline would, which is how tools/serve stops a server
 * over its console. Both are served by a wait loop's turn, and either ends
 * a spin or a park that is under way (signal_pending: signal.c).
 *
 * Output is one write at a time, whatever CPU writes: a lock (spinlock.h)
 * keeps two CPUs' lines whole, and one kprintf is one write. The lock is
 * taken with interrupts off; a panic inside a write on the same CPU writes
 * on without it, and a holder that keeps it past CONSOLE_LOCK_PAUSES is
 * taken for dead and loses it (counted `broken`).
 */
#include <signal.h>
#include <stdarg.h>
#include "arch.h"
#include "kernel.h"
#include "spinlock.h"

#define COM1 0x3f8
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY  0x20
#define LSR_TX_EMPTY   0x40 /* holding and shift registers both empty */
#define FCR_FIFO_ON    0x01 /* FIFO control: both FIFOs on (contents kept when already on) */
#define FCR_TRIGGER_14 0xc0 /* receive interrupt at 14 bytes */
#define IIR_FIFOS      0xc0 /* interrupt identification: both bits set, FIFOs on */
#define UART_FIFO_BYTES 16  /* a 16550's transmit FIFO */
#define COM1_IRQ       4
#define IER_RX_DATA    0x01
#define MCR_DTR_RTS_OUT2 0x0b /* OUT2 gates the UART's interrupt line on PCs */
#define RX_RING        256
#define CONSOLE_LOCK_PAUSES (1ULL << 26) /* far past any line's time; short of a hang */

static char rx_ring[RX_RING];        /* bytes the handler took from the UART */
static volatile unsigned rx_head;    /* written by the handler */
static volatile unsigned rx_tail;    /* written by readers */
static bool rx_by_interrupt;         /* console_input_init succeeded */
volatile bool console_status_requested;
uint64_t console_rx_dropped;         /* ring full */

/*
 * The transmitter is asked for room once per FIFO's worth of bytes, not once
 * a byte: with its FIFOs on, a 16550 reports the holding register empty
 * only when the whole 16-byte FIFO is, so that many bytes may follow one
 * status read. Under KVM every port access is an exit to the VMM, and the
 * status read was half of a boot's console exits. The FIFOs are switched
 * on at the first write (the loader does it too, a PVH boot comes without
 * it); a UART whose IIR does not confirm them gets a byte per status read.
 * Written from interrupt context too (a panic): an interrupted writer's
 * count may let a burst run a few bytes past the FIFO, which QEMU's UART
 * absorbs and a real one would drop, never more.
 */
static unsigned tx_burst; /* bytes per status read: UART_FIFO_BYTES, or 1; 0 until probed */
static unsigned tx_room;  /* bytes that may still go before the status is read again */

static void serial_probe(void)
{
	outb(COM1 + 2, FCR_FIFO_ON | FCR_TRIGGER_14);
	tx_burst = (inb(COM1 + 2) & IIR_FIFOS) == IIR_FIFOS ? UART_FIFO_BYTES : 1;
}

static void serial_putc(char c)
{
	if (tx_room == 0) {
		if (tx_burst == 0)
			serial_probe();
		while (!(inb(COM1 + 5) & LSR_THR_EMPTY))
			cpu_relax();
		tx_room = tx_burst;
	}
	tx_room--;
	outb(COM1, (uint8_t)c);
}

static struct spinlock console_lock = SPINLOCK_INIT("console");

void console_write(const char *buf, size_t len)
{
	uint64_t flags = irq_save();
	bool locked = spin_lock_bounded(&console_lock, CONSOLE_LOCK_PAUSES);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n')
			serial_putc('\r'); /* the terminal on the other side expects CRLF */
		serial_putc(buf[i]);
	}
	if (locked)
		spin_unlock(&console_lock);
	irq_restore(flags);
}

/* The transmitter empty bit (TEMT) rises once the last byte has left the
 * UART, which in QEMU means it was handed to the character device. */
void console_drain(void)
{
	uint64_t t0 = rdtsc();
	while (!(inb(COM1 + 5) & LSR_TX_EMPTY) && rdtsc() - t0 < (1ULL << 32))
		cpu_relax();
}

static void uart_interrupt(void *arg)
{
	(void)arg;
	while (inb(COM1 + 5) & LSR_DATA_READY) {
		char c = (char)inb(COM1);
		if (c == CONSOLE_STATUS_KEY)
			console_status_requested = true;
		else if (c == CONSOLE_INTERRUPT_KEY)
			signal_post(SIGINT);
		else if (rx_head - rx_tail < RX_RING)
			rx_ring[rx_head++ % RX_RING] = c;
		else
			console_rx_dropped++;
	}
}

void console_input_init(void)
{
	spinlock_register(&console_lock);
	int vector = irq_alloc(uart_interrupt, NULL);
	if (vector < 0 || ioapic_route_isa(COM1_IRQ, vector) < 0)
		return; /* input stays polled */
	rx_by_interrupt = true;
	outb(COM1 + 4, MCR_DTR_RTS_OUT2);
	outb(COM1 + 1, IER_RX_DATA);
}

bool console_input_ready(void)
{
	if (rx_by_interrupt)
		return rx_head != rx_tail;
	return inb(COM1 + 5) & LSR_DATA_READY;
}

int console_read(char *buf, size_t len)
{
	size_t n = 0;
	if (rx_by_interrupt) {
		while (n < len && rx_tail != rx_head)
			buf[n++] = rx_ring[rx_tail++ % RX_RING];
		return (int)n;
	}
	while (n < len && (inb(COM1 + 5) & LSR_DATA_READY))
		buf[n++] = (char)inb(COM1);
	return (int)n;
}

/* ---- kvsnprintf: %[-0][width][l|ll|z](d|i|u|x|X|p|s|c|%) ------------------- */

struct out {
	char *buf;   /* destination */
	size_t size; /* its capacity */
	size_t len;  /* characters produced so far (may exceed size) */
};

static void emit(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void emit_number(struct out *o, unsigned long long v, int base, int upper, int neg,
			int width, int zero, int left)
{
	char tmp[24];
	int n = 0;
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	do {
		tmp[n++] = digits[v % (unsigned)base];
		v /= (unsigned)base;
	} while (v);
	int total = n + neg;
	if (neg && zero)
		emit(o, '-');
	for (; !left && total < width; width--)
		emit(o, zero ? '0' : ' ');
	if (neg && !zero)
		emit(o, '-');
	while (n)
		emit(o, tmp[--n]);
	for (; left && total < width; width--)
		emit(o, ' ');
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0 };
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			emit(&o, *fmt);
			continue;
		}
		int left = 0, zero = 0, width = 0, lng = 0;
		for (fmt++; *fmt == '-' || *fmt == '0'; fmt++)
			*fmt == '-' ? (left = 1) : (zero = 1);
		for (; *fmt >= '0' && *fmt <= '9'; fmt++)
			width = width * 10 + (*fmt - '0');
		for (; *fmt == 'l' || *fmt == 'z'; fmt++)
			lng++;
		switch (*fmt) {
		case 'd':
		case 'i': {
			long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
			unsigned long long mag = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
			emit_number(&o, mag, 10, 0, v < 0, width, zero, left);
			break;
		}
		case 'u':
			emit_number(&o, lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 10, 0, 0,
				    width, zero, left);
			break;
		case 'x':
		case 'X':
			emit_number(&o, lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 16,
				    *fmt == 'X', 0, width, zero, left);
			break;
		case 'p':
			emit(&o, '0');
			emit(&o, 'x');
			emit_number(&o, (uintptr_t)va_arg(ap, void *), 16, 0, 0, width, zero, left);
			break;
		case 'c':
			emit(&o, (char)va_arg(ap, int));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			int n = 0;
			if (!s)
				s = "(null)";
			while (s[n])
				n++;
			for (; !left && n < width; width--)
				emit(&o, ' ');
			for (int i = 0; s[i]; i++)
				emit(&o, s[i]);
			for (; left && n < width; width--)
				emit(&o, ' ');
			break;
		}
		case '%':
			emit(&o, '%');
			break;
		case 0:
			fmt--;
			break;
		default:
			emit(&o, '%');
			emit(&o, *fmt);
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int kprintf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = kvsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	console_write(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	return n;
}
