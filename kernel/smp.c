/*
 * smp.c: finding the machine's CPUs and starting the APs (see smp.h).
 *
 * The CPUs come from ACPI's MADT where the firmware gives one (SeaBIOS on
 * QEMU's pc machine, PVH or not; qboot on microvm with ACPI on), else from
 * the MP table (qboot on microvm without ACPI writes one; the pc machine's
 * SeaBIOS does too for more than one CPU), read with smp_tables.c's checks.
 * Neither: the boot CPU alone, and the verbose line says why.
 *
 * Each AP gets its own per-CPU area (percpu.h), a 64 KiB stack over an
 * unmapped guard page, a 16 KiB IST1 stack, and a timer heap, all allocated
 * before the first AP starts (the page tables are the boot CPU's to change,
 * and no other CPU's TLB is ever flushed). Then, one AP at a time: INIT, a
 * STARTUP IPI naming the trampoline's page (trampoline.h), a second if it
 * has not started within 200 us, and a bounded wait for it to come online.
 * An AP that does not is named with how far it got, sent INIT again (which
 * holds it until a STARTUP that never comes) and left out; one that comes
 * with another APIC ID than the table's halts in the trampoline, counted.
 * Last, a call runs on each AP and must return that AP's APIC ID, and a
 * wake ends its park: the round trip every later use of IPIs relies on.
 *
 * Kernel option smp=N takes at most N CPUs, smp=0 all there are. The
 * default, smp=1, reads no table and starts none, so a boot is what it was
 * before SMP: looking for the tables alone took about a millisecond of a
 * boot under TCG (the RSDP's search through the BIOS area), and no design
 * uses a second CPU yet (docs/design/smp.md).
 */
#include <errno.h>
#include "acpi.h"
#include "arch.h"
#include "clock.h"
#include "cpu.h"
#include "kernel.h"
#include "mem.h"
#include "percpu.h"
#include "smp.h"
#include "smp_tables.h"
#include "switches.h"
#include "trampoline.h"

_Static_assert(SMP_MAX_CPUS == SMP_TABLE_MAX_CPUS, "one bound on CPUs");

#define AP_STACK_PAGES   16        /* 64 KiB */
#define AP_IST_PAGES     4         /* 16 KiB, as the boot CPU's IST1 */
#define AP_TIMER_SLOTS   (2 * PAGE_SIZE / sizeof(struct timer *))
#define AP_START_TIMEOUT_NS (NSEC_PER_SEC)  /* a loaded TCG host may start a vCPU thread late */
#define SIPI_RETRY_NS    200000    /* the SDM's 200 us before the second STARTUP */
#define ICR_INIT         0x500     /* delivery mode INIT */
#define ICR_STARTUP      0x600     /* delivery mode STARTUP (the vector is the page) */
#define ICR_ASSERT       (1u << 14)
#define MSR_EFER         0xc0000080
#define PTE_P_W_PS       0x83ULL   /* present, writable, 2 MiB page */
#define BIOS_ROM_START   0xf0000
#define BIOS_ROM_END     0x100000
#define BASE_MEM_LAST_KIB 0x9fc00  /* the last KiB of 640 KiB: where an MP table lies without an EBDA */
#define EBDA_END         0xa0000
#define MP_CONFIG_LIMIT  (1ULL << 32)

struct percpu percpu_boot = {
	.self = &percpu_boot,
	.spin = { SPIN_NS_DEFAULT, SPIN_NS_DEFAULT, SPIN_NS_DEFAULT },
	.timers = &timer_queue_boot,
	.state = CPU_ONLINE,
	.mailbox = { .lock = SPINLOCK_INIT("mailbox") },
};
struct percpu *percpu_of[SMP_MAX_CPUS] = { &percpu_boot };
uint32_t smp_cpus_known = 1;
volatile uint32_t smp_cpus_online = 1;

/* The APs' first page tables: the first GiB one-to-one in 2 MiB pages,
 * writable and executable, for the few instructions between the
 * trampoline's long mode and the kernel's own tables. In the image (below
 * 4 GiB, as a 32-bit CR3 needs), touched only when an AP is started. */
static uint64_t early_pml4[512] __attribute__((aligned(4096)));
static uint64_t early_pdpt[512] __attribute__((aligned(4096)));
static uint64_t early_pd[512] __attribute__((aligned(4096)));

extern char smp_ap_entry[];  /* trampoline.S */
extern char boot_stack_top[]; /* start.S */
extern char __image_end[];
void smp_ap_main(struct percpu *p);

/* ---- what the firmware lists -------------------------------------------- */

/* Where the MP table was found, so the trampoline stays off it. */
static struct phys_range mp_found[2];
static int nmp_found;

static void note_mp_range(uint64_t start, uint64_t len)
{
	if (nmp_found < 2)
		mp_found[nmp_found++] = (struct phys_range){ start, start + len };
}

/* The MP table's CPUs, through a floating pointer in one of the places the
 * MP specification names: 0 or -1 with the reason. */
static int mp_cpus(uint64_t ebda, struct smp_cpu_list *list, const char **why)
{
	const struct phys_range areas[] = {
		ebda ? (struct phys_range){ ebda, ebda + 1024 } : (struct phys_range){ BASE_MEM_LAST_KIB, EBDA_END },
		{ BIOS_ROM_START, BIOS_ROM_END },
	};
	uint32_t config = 0;
	int found = -1;
	for (size_t i = 0; i < sizeof areas / sizeof areas[0] && found < 0; i++) {
		uint64_t len = areas[i].end - areas[i].start;
		size_t at;
		found = smp_mp_find(mmio_map(areas[i].start, len), len, &at, &config, why);
		if (found == 0)
			note_mp_range(areas[i].start + at, MP_FLOAT_LEN);
	}
	if (found < 0)
		return -1;
	if (config < PAGE_SIZE || (uint64_t)config + MP_CONFIG_HEADER > MP_CONFIG_LIMIT) {
		*why = "the MP configuration table's address is in page 0 or past 4 GiB";
		return -1;
	}
	const uint8_t *cfg = mmio_map(config, MP_CONFIG_HEADER);
	size_t len = smp_mp_config_length(cfg, MP_CONFIG_HEADER);
	if (len > MP_CONFIG_HEADER && config + len <= MP_CONFIG_LIMIT)
		cfg = mmio_map(config, len);
	else
		len = MP_CONFIG_HEADER;
	note_mp_range(config, len);
	return smp_mp_cpus(cfg, len, list, why);
}

/* The firmware's CPUs into list: the MADT's, else the MP table's. The
 * source's name, or NULL with the reason when neither gives them. */
static const char *find_cpus(uint64_t ebda, struct smp_cpu_list *list, char *why, size_t why_size)
{
	const char *acpi_why, *mp_why;
	const uint8_t *madt = acpi_find_table("APIC", ebda, &acpi_why);
	if (madt) {
		if (smp_madt_cpus(madt, acpi_table_length(madt), list, &acpi_why) == 0)
			return "the MADT";
		kprintf("kernel: smp: the MADT is refused: %s\n", acpi_why);
	}
	if (mp_cpus(ebda, list, &mp_why) == 0)
		return "the MP table";
	ksnprintf(why, why_size, "MADT: %s; MP table: %s", acpi_why, mp_why);
	return NULL;
}

/* ---- starting one AP ---------------------------------------------------- */

static void wait_ns(uint64_t ns)
{
	uint64_t until = clock_ns() + ns;
	while (clock_ns() < until)
		cpu_relax();
}

static const char *stage_name(uint32_t stage)
{
	switch (stage) {
	case TRAMPOLINE_STAGE_NONE: return "it never reached the trampoline";
	case TRAMPOLINE_STAGE_REAL: return "it stopped in real mode";
	case TRAMPOLINE_STAGE_PROTECTED: return "it stopped in 32-bit mode";
	case TRAMPOLINE_STAGE_LONG: return "it stopped in long mode on its first tables";
	case TRAMPOLINE_STAGE_KERNEL: return "it stopped in the kernel before it came online";
	default: return "it wrote a stage the trampoline has not";
	}
}

/* A per-CPU area for CPU n with its stacks and timer heap; NULL when the
 * pages ran out. */
static struct percpu *area_for(uint32_t n, uint32_t apic_id)
{
	size_t area_pages = (sizeof(struct percpu) + PAGE_SIZE - 1) / PAGE_SIZE;
	struct percpu *p = page_alloc(area_pages);
	uint8_t *stack = page_alloc(AP_STACK_PAGES + 1);
	uint8_t *ist = page_alloc(AP_IST_PAGES);
	struct timer **slots = page_alloc(AP_TIMER_SLOTS * sizeof *slots / PAGE_SIZE);
	struct timerq *heap = page_alloc(1);
	if (!p || !stack || !ist || !slots || !heap)
		return NULL;
	mem_guard_page((uint64_t)stack);
	*heap = (struct timerq){ slots, 0, (int)AP_TIMER_SLOTS };
	*p = (struct percpu){
		.self = p,
		.cpu = n,
		.apic_id = apic_id,
		.spin = percpu_boot.spin,
		.timers = heap,
		.state = CPU_ABSENT,
		.mailbox = { .lock = SPINLOCK_INIT("mailbox") },
		.stack_top = (uint64_t)(stack + (AP_STACK_PAGES + 1) * PAGE_SIZE),
		.ist_top = (uint64_t)(ist + AP_IST_PAGES * PAGE_SIZE),
	};
	return p;
}

/* INIT, STARTUP (twice if need be), and the wait: true once p is online. */
static bool start_ap(struct percpu *p, uint8_t *page, uint64_t page_phys)
{
	volatile struct trampoline_data *d = trampoline_data_of(page);
	trampoline_set_cpu(page, (uint8_t)p->apic_id, p->stack_top, (uint64_t)p);
	p->state = CPU_STARTING;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Hardware wants 10 ms between INIT and STARTUP (the SDM's sequence);
	 * QEMU's and KVM's APICs take INIT before a STARTUP sent after it. */
	bool hypervisor = cpu_hypervisor() == HYPERVISOR_TCG || cpu_hypervisor() == HYPERVISOR_KVM;
	lapic_send_ipi(p->apic_id, ICR_ASSERT | ICR_INIT);
	wait_ns(hypervisor ? 10000 : 10000000);
	lapic_send_ipi(p->apic_id, ICR_ASSERT | ICR_STARTUP | trampoline_vector(page_phys));
	wait_ns(SIPI_RETRY_NS);
	if (d->stage == TRAMPOLINE_STAGE_NONE) /* a STARTUP to a running CPU is ignored: harmless */
		lapic_send_ipi(p->apic_id, ICR_ASSERT | ICR_STARTUP | trampoline_vector(page_phys));
	uint64_t until = clock_ns() + AP_START_TIMEOUT_NS;
	while (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == CPU_STARTING && clock_ns() < until)
		cpu_relax();
	uint32_t starting = CPU_STARTING;
	if (__atomic_compare_exchange_n(&p->state, &starting, CPU_LOST, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		kprintf("kernel: smp: CPU %u (APIC ID %u) did not come online within %llu ms (%s); left out\n",
			p->cpu, p->apic_id, AP_START_TIMEOUT_NS / 1000000, stage_name(d->stage));
	}
	if (p->state != CPU_ONLINE) {
		lapic_send_ipi(p->apic_id, ICR_ASSERT | ICR_INIT); /* held until a STARTUP that never comes */
		return false;
	}
	return true;
}

/* ---- the AP's side ------------------------------------------------------ */

/* The AP's first C, on its own stack, from smp_ap_entry: its GS base, tables
 * and local APIC, then online (unless the boot CPU gave up on it first), and
 * the idle loop. */
void smp_ap_main(struct percpu *p)
{
	percpu_install(p);
	cpu_init_ap(&p->tables, p->ist_top);
	bool apic_ok = lapic_init_ap() && lapic_id() == p->apic_id;
	uint32_t starting = CPU_STARTING;
	if (!apic_ok || !__atomic_compare_exchange_n(&p->state, &starting, CPU_ONLINE, false,
						     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (!apic_ok)
			__atomic_store_n(&p->state, CPU_LOST, __ATOMIC_RELEASE);
		for (;;)
			__asm__ volatile("cli; hlt");
	}
	__atomic_add_fetch(&smp_cpus_online, 1, __ATOMIC_RELEASE);
	irq_enable();
	smp_idle();
}

/* What the boot check's call runs on the AP: its APIC ID, from the APIC. */
static uint64_t answer_apic_id(uint64_t arg)
{
	(void)arg;
	return lapic_id();
}

/* ---- the boot CPU's side ------------------------------------------------ */

static void early_tables_init(void)
{
	for (uint64_t i = 0; i < 512; i++)
		early_pd[i] = (i << 21) | PTE_P_W_PS;
	early_pdpt[0] = (uint64_t)early_pd | 3;
	early_pml4[0] = (uint64_t)early_pdpt | 3;
}

/* The trampoline's page, filled in: its physical address (identity-mapped),
 * or 0 with a message. */
static uint64_t trampoline_setup(const struct bootinfo *bi, uint64_t ebda)
{
	struct phys_range avoid[4] = { { 0, 0 } };
	int navoid = 0;
	if (ebda)
		avoid[navoid++] = (struct phys_range){ ebda & ~(PAGE_SIZE - 1), EBDA_END };
	for (int i = 0; i < nmp_found; i++)
		avoid[navoid++] = mp_found[i];
	uint32_t nmem = bi->nmem < BOOTINFO_MAX_MEM ? bi->nmem : BOOTINFO_MAX_MEM;
	uint64_t phys = trampoline_pick_page(bi->mem, (int)nmem, avoid, navoid);
	if (!phys || !mem_is_mapped_ram(phys, PAGE_SIZE)) {
		kprintf("kernel: smp: no free page of RAM below 640 KiB for the APs' trampoline: "
			"the boot CPU only\n");
		return 0;
	}
	KCHECK((uint64_t)__image_end <= TRAMPOLINE_MAP_LIMIT);
	early_tables_init();
	const struct trampoline_args args = {
		.cr3_early = (uint64_t)early_pml4,
		.kernel_cr3 = read_cr3(),
		.cr0 = read_cr0(),
		.cr4 = read_cr4(),
		.efer = rdmsr(MSR_EFER),
		.entry = (uint64_t)smp_ap_entry,
	};
	const char *why;
	if (trampoline_fill((uint8_t *)phys, phys, &args, &why) < 0) {
		kprintf("kernel: smp: %s: the boot CPU only\n", why);
		return 0;
	}
	return phys;
}

/* Each started AP answers a call with its own APIC ID, and takes a wake. */
static int check_round_trips(void)
{
	int answered = 0;
	for (uint32_t n = 1; n < smp_cpus_known; n++) {
		struct percpu *p = percpu_of[n];
		uint64_t id = 0;
		if (!p || p->state != CPU_ONLINE)
			continue;
		int r = smp_call(n, answer_apic_id, 0, &id);
		if (r == 0 && id == p->apic_id) {
			answered++;
			smp_wake(n);
		} else if (r == 0) {
			kprintf("kernel: smp: CPU %u answered with APIC ID %lu, not %u\n", n, id, p->apic_id);
		}
	}
	return answered;
}

void smp_init(const struct bootinfo *bi, uint64_t ebda)
{
	percpu_boot.apic_id = lapic_id();
	percpu_boot.stack_top = (uint64_t)boot_stack_top;
	long limit = kopt_number(KOPT_SMP);
	if (limit == 1)
		return; /* smp=1, the default: no table read, nothing started */
	if (limit <= 0 || limit > SMP_MAX_CPUS)
		limit = SMP_MAX_CPUS; /* smp=0: all there are */
	bool verbose = kopt_flag(KOPT_VERBOSE);

	static struct smp_cpu_list list; /* a few hundred bytes, read once */
	char why[192];
	const char *from = find_cpus(ebda, &list, why, sizeof why);
	if (!from) {
		if (verbose)
			kprintf("kernel: smp: no CPU table (%s): the boot CPU only\n", why);
		return;
	}
	if (list.refused)
		kprintf("kernel: smp: %d CPU entr%s of %s refused: %s\n", list.refused,
			list.refused == 1 ? "y" : "ies", from, list.refused_why);
	if (list.dropped)
		kprintf("kernel: smp: %d CPUs of %s past the kernel's %d left out\n", list.dropped, from,
			SMP_MAX_CPUS);
	if (list.n == 0) {
		kprintf("kernel: smp: %s lists no CPU the kernel can use (%d disabled): the boot CPU only\n",
			from, list.disabled);
		return;
	}
	int boot_index = -1;
	for (int i = 0; i < list.n; i++)
		if (list.apic_id[i] == percpu_boot.apic_id)
			boot_index = i;
	if (boot_index < 0) {
		kprintf("kernel: smp: the boot CPU's APIC ID %u is not in %s: the boot CPU only\n",
			percpu_boot.apic_id, from);
		return;
	}
	if (list.n < 2) {
		if (verbose)
			kprintf("kernel: smp: 1 CPU in %s\n", from);
		return;
	}

	uint64_t page_phys = trampoline_setup(bi, ebda);
	if (!page_phys)
		return;
	smp_ipi_init();
	/* Every AP's area, stacks and heap first: the page tables change here
	 * (the guard pages) while no other CPU runs on them. */
	for (int i = 0; i < list.n && (long)smp_cpus_known < limit; i++) {
		if (i == boot_index)
			continue;
		struct percpu *p = area_for(smp_cpus_known, list.apic_id[i]);
		if (!p) {
			kprintf("kernel: smp: out of memory for CPU %u's stacks: %u CPUs at most\n",
				smp_cpus_known, smp_cpus_known);
			break;
		}
		percpu_of[smp_cpus_known++] = p;
	}
	uint64_t t0 = clock_ns();
	for (uint32_t n = 1; n < smp_cpus_known; n++)
		start_ap(percpu_of[n], (uint8_t *)page_phys, page_phys);
	uint32_t strays = trampoline_data_of((uint8_t *)page_phys)->strays;
	if (strays)
		kprintf("kernel: smp: %u CPU%s came to the trampoline with an APIC ID the table did not "
			"give, and halted\n", strays, strays == 1 ? "" : "s");
	int answered = check_round_trips();
	if (verbose) {
		char ids[SMP_MAX_CPUS * 5];
		size_t len = 0;
		for (uint32_t n = 0; n < smp_cpus_known && len < sizeof ids; n++)
			if (percpu_of[n]->state == CPU_ONLINE)
				len += (size_t)ksnprintf(ids + len, sizeof ids - len, "%s%u", len ? " " : "",
							 percpu_of[n]->apic_id);
		kprintf("kernel: smp: %u of %d CPUs in %s running (APIC IDs %s), %s; %d of %u APs "
			"answered a call; started in %lu us, trampoline at 0x%lx\n",
			smp_cpus_online, list.n, from, ids, lapic_x2apic() ? "x2APIC" : "xAPIC", answered,
			smp_cpus_known - 1, (clock_ns() - t0) / 1000, page_phys);
	}
}
