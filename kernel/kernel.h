/*
 * kernel.h: what the kernel offers to drivers, the network stack and the
 * application linked with it. One address space: physical addresses are
 * virtual addresses. One CPU, the boot CPU, runs the app and owns what is
 * here (other CPUs, when smp= starts them, park: docs/design/smp.md), so
 * nothing here takes locks; code that shares state with an interrupt
 * handler disables interrupts around it.
 */
#ifndef KERNEL_H
#define KERNEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "switches.h"

/* ---- exit statuses the kernel itself uses (the app's own are 0..127) ---- */
#define KERNEL_PANIC_STATUS 70 /* EX_SOFTWARE: a panic or a fatal exception */
/* EX_OSERR: the machine lacks a clock the kernel can use (no source of the
 * TSC's rate, the one `clock=` names absent, a LAPIC timer that does not count) */
#define KERNEL_NO_CLOCK_STATUS 71
/* The console's last line on every exit, followed by the status in decimal:
 * tools/qemu-run reads it to confirm isa-debug-exit's code. */
#define KERNEL_EXIT_LINE "kernel: exit status "

/* ---- console (COM1) -------------------------------------------------------- */
void console_write(const char *buf, size_t len);
int console_read(char *buf, size_t len); /* bytes read, 0 if none waiting */
void console_drain(void); /* wait (2^32 TSC cycles at most) until the UART has sent all */
bool console_input_ready(void);
/* Route the UART's receive interrupt (boot). */
void console_input_init(void);
#define CONSOLE_STATUS_KEY 0x14    /* Ctrl-T: print the counters */
#define CONSOLE_INTERRUPT_KEY 0x03 /* Ctrl-C: SIGINT to the app (signal_post) */
extern volatile bool console_status_requested;
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- counters ------------------------------------------------------------------
 * Layers register a function that prints their counters; all of them run at
 * exit (unless the kernel option quiet is given) and whenever the console's
 * status key arrives. */
void stats_register(void (*print)(void));
/* Where the CPU's time goes, in TSC cycles, for the counter report. */
enum stats_phase {
	PHASE_POLL,   /* polling the wait source: driver, stack and egress */
	PHASE_EGRESS, /* the part of it spent in the egress pass */
	PHASE_SPIN,   /* spinning with the device interrupt off */
	PHASE_PARK,   /* halted */
	NPHASES,
};
void stats_phase_add(enum stats_phase phase, uint64_t cycles);
static inline uint64_t cpu_cycles(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
/* A 64-bit mixing function (the splitmix64 finaliser): keyed, it makes one
 * connection's initial sequence number say nothing useful about another's
 * (RFC 6528's aim), without being a cryptographic PRF. lwIP's ISNs
 * (net/tcp_hooks.c) and the floor's (apps/floor/tcp.c) use it. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}
void stats_print_all(void);
/* Print the counters if the status key was pressed; called from wait loops. */
void stats_service(void);

/* ---- signals (kernel/signal.c) ----------------------------------------------
 * The kernel posts a signal from an interrupt handler (the console's
 * interrupt key); the wait loops deliver it, running the app's handler in
 * the task's context. */
void signal_post(int sig);   /* interrupt-safe: sig is pending */
/* Some signal is posted and not yet delivered, or the console's status key
 * waits for stats_service: work only a wait loop's turn does. */
bool signal_pending(void);
/* Deliver the pending signals (wait loops); true when a handler ran, which
 * ends an interruptible wait with EINTR. */
bool signal_service(void);
/* The same for this CPU's wait loop: the app's CPU's alone under an SMP
 * design (switches.h), the status key only while its signals are held;
 * without one, every wait loop's, at no cost. */
#if SMP_DESIGN
bool signal_pending_here(void);
bool signal_service_here(void);
#else
static inline bool signal_pending_here(void) { return signal_pending(); }
static inline bool signal_service_here(void) { return signal_service(); }
#endif
/* A signal (not the status key) is posted and not yet delivered. */
bool signal_posted(void);

/* ---- failure and exit ------------------------------------------------------ */
__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
__attribute__((noreturn)) void kernel_exit(int status);
void backtrace_print(uint64_t rbp, uint64_t rip);

/* Two kinds of assertion. KCHECK guards memory (an index, a count about to
 * be used, a pointer about to be followed): it holds in every build, release
 * included, because a check that vanishes under -DNDEBUG vanishes exactly in
 * the images that serve and are measured. KASSERT is for the costly walks
 * (a list's consistency, a queue's order) that only debug builds afford. */
#define KCHECK(cond) \
	(__builtin_expect(!!(cond), 1) ? (void)0 : panic("check failed: %s at %s:%d", #cond, __FILE__, __LINE__))

#ifdef NDEBUG
#define KASSERT(cond) ((void)0)
#else
#define KASSERT(cond) \
	((cond) ? (void)0 : panic("assertion failed: %s at %s:%d", #cond, __FILE__, __LINE__))
#endif

/* ---- memory ---------------------------------------------------------------- */
#define PAGE_SIZE 4096UL

/* n zeroed, physically contiguous pages (for DMA rings); NULL when none are left. */
void *page_alloc(size_t npages);
/* The pages set aside at boot for the network's heap, net_heap_arena_bytes
 * of them (net/net.c defines it), untouched: whatever RAM held, so that the
 * pages lwIP never uses are never touched, and a host backing guest RAM
 * lazily never has to provide them. NULL when the RAM had no run that long. */
void *kmem_net_heap_arena(void);
/* Map device memory uncached; returns its virtual address (equal to phys). */
void *mmio_map(uint64_t phys, size_t len);
/* Heap break for newlib's malloc; (void *)-1 and errno ENOMEM when exhausted. */
void *kernel_sbrk(intptr_t incr);

struct mem_stats {
	uint64_t ram_bytes;       /* usable RAM the firmware reported */
	uint64_t heap_bytes;      /* heap break - heap start */
	uint64_t heap_high_water; /* the most heap_bytes has been */
	uint64_t heap_limit;      /* most the heap can grow to now */
	uint64_t pages_allocated; /* by page_alloc */
	uint64_t malloc_bytes;    /* handed out by malloc and not freed */
};
void mem_get_stats(struct mem_stats *st);
/* Bytes the heap can still grow by (heap_limit - heap_bytes): what a
 * subsystem sizing an optional allocation weighs it against. */
uint64_t mem_heap_room(void);

/* ---- time ------------------------------------------------------------------ */
#define NSEC_PER_SEC 1000000000ULL

uint64_t clock_ns(void);          /* monotonic nanoseconds since boot */
uint64_t clock_realtime_ns(void); /* nanoseconds since the Unix epoch (from the RTC) */
uint64_t clock_tsc_hz(void);
/* The TSC value at which clock_ns() reaches ns (UINT64_MAX stays so): a spin
 * can compare rdtsc() against it instead of converting at every turn. */
uint64_t clock_tsc_at(uint64_t ns);


/*
 * One-shot timers. A timer's callback runs in thread context (from a wait loop,
 * never from the interrupt handler), so it may call anything.
 */
struct timer {
	uint64_t deadline;              /* clock_ns() value when it is due */
	void (*fn)(struct timer *t);    /* run once when due */
	int heap_index;                 /* position in the timer heap; -1 when idle */
};
void timer_init(struct timer *t, void (*fn)(struct timer *t));
void timer_start(struct timer *t, uint64_t deadline_ns); /* (re)arms it */
void timer_cancel(struct timer *t);
bool timer_pending(const struct timer *t);
uint64_t timer_next_deadline(void); /* earliest pending deadline, UINT64_MAX if none */
int timer_run_expired(void);        /* runs due callbacks; returns how many ran */

/*
 * Park the CPU until an interrupt arrives or `deadline_ns` passes (UINT64_MAX:
 * only an interrupt). Programs the LAPIC one-shot timer for exactly that
 * deadline (the caller folds in timer_next_deadline() and any other it owes)
 * and halts with interrupts on. Returns immediately if `*wake_flag` is set
 * (pass NULL for none); the flag is checked with interrupts off, so a wake-up
 * between check and halt is not lost.
 */
void cpu_park(uint64_t deadline_ns, volatile bool *wake_flag);
/* Program the LAPIC one-shot for deadline_ns, unless it already holds it
 * (SW_TIMER_NO_RELOAD); counted as a reload or a skipped one. */
void timer_program_oneshot(uint64_t deadline_ns);
/* Sleep until the deadline; timers and the network (block_on) run meanwhile. */
void sleep_until(uint64_t deadline_ns);

/* ---- executor: how a blocking call waits ------------------------------------
 * One wait source (the network) registers how to poll it; block_on() waits for
 * a caller's condition by polling it when it is due, running timers, spinning
 * briefly with its interrupt off, and parking. */
struct wait_source {
	bool (*due)(void);              /* O(1): work waiting (frame, egress, expired timer)? */
	bool (*device_ready)(void);     /* O(1), for the spin: the device has handed us work */
	bool (*poll)(void);             /* do it; true when something happened */
	uint64_t (*next_deadline)(void); /* when it must be polled without an interrupt */
	bool (*arm)(void);              /* interrupt on; true if work arrived meanwhile */
	void (*disarm)(void);           /* interrupt off */
	volatile bool *wake;            /* raised by its interrupt handler */
	bool (*drained)(void);          /* O(1): the device has taken all it was given */
	/* Optional (the network core's app side, handoff.c): O(1), nothing will
	 * come before another CPU's own wait ends, so spinning would only burn
	 * this one: park at once. NULL: never. */
	bool (*quiet)(void);
};
void executor_set_source(const struct wait_source *src);
/* 0 once ready(ctx) holds, -ETIMEDOUT when deadline_ns (clock_ns time) passes.
 * A signal's handler may run while it waits; the wait goes on (the calls that
 * use it behave as under SA_RESTART). */
int block_on(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns);
/* The same, but a signal whose handler ran ends the wait with -EINTR unless
 * ready(ctx) holds (poll()). */
int block_on_intr(bool (*ready)(void *ctx), void *ctx, uint64_t deadline_ns);
/* One non-blocking turn: poll the source if due, run expired timers. */
bool executor_poll(void);
/* At exit: poll the source until it is drained, for EXIT_DRAIN_NS at most. */
void executor_drain(void);
/* How long the next spin waits for the device before the CPU parks: what a
 * wait for the next frame costs anyway (the driver's timed hold uses it). */
uint64_t executor_spin_window_ns(void);

/* ---- what runs us ------------------------------------------------------------
 * The hypervisor, from its CPUID signature (leaf 0x40000000): TCG and KVM
 * differ in what is cheap (see docs/kvm.md), so code may choose. */
enum hypervisor {
	HYPERVISOR_NONE,  /* no signature and no CPUID hypervisor flag: bare metal */
	HYPERVISOR_TCG,   /* QEMU's emulator ("TCGTCGTCGTCG") */
	HYPERVISOR_KVM,   /* Linux KVM ("KVMKVMKVM") */
	HYPERVISOR_OTHER, /* the flag, another signature */
	HYPERVISOR_UNKNOWN, /* not asked yet (cpu_hypervisor's cache) */
};
enum hypervisor cpu_hypervisor(void);
uint32_t cpu_kvm_features(void); /* KVM's CPUID 0x40000001 EAX; 0 when not under KVM */
const char *cpu_hypervisor_name(enum hypervisor h); /* "TCG", "KVM", ... */

/* ---- where one request's time goes (trace.c) ---------------------------------
 * Points on the path of one request, in order. trace_mark() costs a load and a
 * compare unless a sample waits for exactly that point. */
enum trace_point {
	TP_FRAME,  /* the driver hands a received frame to the netif */
	TP_INPUT,  /* the frame, in a pbuf, goes into lwIP */
	TP_QUEUE,  /* a socket queues the data lwIP delivers */
	TP_POLL,   /* poll() returns with a descriptor ready */
	TP_READ,   /* read() copies the request out */
	TP_WRITEV, /* the answer's write/writev starts */
	TP_EGRESS, /* the egress pass dispatches the socket */
	TP_OUTPUT, /* tcp_output for it */
	TP_PUBLISH, /* the answer's frame is on the transmit ring, its index published */
	TP_KICK,   /* the device notified (an MMIO write), or told it needs none */
	NTRACE,
};
struct trace_state {
	enum trace_point next; /* the point the sample in progress waits for */
};
extern struct trace_state trace_state;
void trace_record(enum trace_point p);
static inline void trace_mark(enum trace_point p)
{
	if (p == TP_FRAME || trace_state.next == p) /* every frame counts toward the sampling */
		trace_record(p);
}
void trace_print(void); /* one 'trace:' line: each stage's median and p90 */

/* ---- interrupts ------------------------------------------------------------ */
typedef void (*irq_handler_t)(void *arg);
/* A free interrupt vector bound to handler(arg), or -1. Handlers run with
 * interrupts off and must be short: set a flag, record work; the EOI is ours. */
int irq_alloc(irq_handler_t handler, void *arg);
/* One of the fixed vectors above those irq_alloc hands out (cpu.h's IPI
 * vectors) bound to handler(arg): 0, or -1 when it is not one or is bound. */
int irq_bind(int vector, irq_handler_t handler, void *arg);
uint32_t lapic_id(void);
void ioapic_init(void);
/* Deliver ISA interrupt `irq` to `vector` on this CPU. 0, or -1. */
int ioapic_route_isa(int irq, int vector);
/* Deliver a level-triggered, active-high line on input `gsi` to `vector` on
 * this CPU (its handler acknowledges the device before the EOI). 0, or -1
 * when there is no such input or it is routed already. */
int ioapic_route_level(int gsi, int vector);
/* A routed input's interrupts to this CPU from now on; -1 if not routed. */
int ioapic_route_here(int gsi);

/* ---- PCI ------------------------------------------------------------------- */
struct pci_dev {
	uint8_t bus, dev, fn;     /* configuration-space address */
	uint16_t vendor, device;  /* IDs */
	uint8_t class, subclass;  /* class code */
	uint16_t subsys_device;   /* subsystem ID (virtio: the device type) */
	uint8_t msix_cap;         /* offset of the MSI-X capability, 0 if none */
	uint16_t msix_size;       /* MSI-X table entries */
	volatile uint32_t *msix_table; /* mapped MSI-X table, once enabled */
};

void pci_init(int verbose); /* boot: enumerate, print the devices if verbose */
int pci_count(void);
struct pci_dev *pci_get(int i);
struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int nth);
uint32_t pci_read32(const struct pci_dev *d, uint8_t off);
uint16_t pci_read16(const struct pci_dev *d, uint8_t off);
uint8_t pci_read8(const struct pci_dev *d, uint8_t off);
void pci_write32(const struct pci_dev *d, uint8_t off, uint32_t v);
void pci_write16(const struct pci_dev *d, uint8_t off, uint16_t v);
/* Offset of the first capability with `id` after offset `after` (0: from the start), or 0. */
uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t after);
/* Base address and size of BAR n (memory BARs, 64-bit aware); 0 if absent or I/O. */
uint64_t pci_bar(const struct pci_dev *d, int n, uint64_t *size);
void pci_enable_bus_master(const struct pci_dev *d);
/* MSI-X: enable with every entry masked; route entry -> vector on this CPU; mask/unmask. */
int pci_msix_enable(struct pci_dev *d);
void pci_msix_route(struct pci_dev *d, int entry, int vector);
/* A routed entry's interrupts to this CPU from now on, its vector kept. */
void pci_msix_route_here(struct pci_dev *d, int entry);
void pci_msix_mask(struct pci_dev *d, int entry, bool masked);

/* ---- file descriptors ------------------------------------------------------
 * One table for the console and, later, sockets. A file is an object and the
 * operations on it; an operation left NULL fails with the errno Linux gives. */
struct stat;
struct iovec;
struct file_ops {
	long (*read)(void *obj, void *buf, size_t len);        /* bytes, or -errno */
	long (*write)(void *obj, const void *buf, size_t len); /* bytes, or -errno */
	long (*writev)(void *obj, const struct iovec *iov, int n); /* NULL: write each */
	int (*close)(void *obj);                               /* 0 or -errno */
	int (*fstat)(void *obj, struct stat *st);              /* 0 or -errno */
	short (*poll)(void *obj, short events);                /* ready events (poll.h) */
	int (*get_flags)(void *obj);                           /* O_NONBLOCK etc. */
	int (*set_flags)(void *obj, int flags);                /* 0 or -errno */
	int (*ioctl)(void *obj, unsigned long req, void *arg); /* 0 or -errno */
	int isatty;                                            /* a terminal? */
};
#define FD_MAX 2048
int fd_install(const struct file_ops *ops, void *obj); /* lowest free fd, or -EMFILE */
int fd_lookup(int fd, const struct file_ops **ops, void **obj); /* 0 or -EBADF */
void fd_release(int fd);
/* Takes fd out of the table, then runs its close: 0, -EBADF, or the close's
 * -errno (the descriptor is gone either way, as on Linux). */
int fd_close(int fd);
int fd_count_open(void); /* descriptors in use (the console's three included) */

/* ---- kernel options (`key=value` before `--`) -------------------------------
 * Declared in one table, checked at boot, read through typed accessors:
 * kopt_flag(KOPT_VERBOSE), kopt_number(KOPT_VNET_REPAIR), ... */
#include "options.h"

#endif
