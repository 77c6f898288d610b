/*
 * pvh.S: the image's second way in, with no loader: the PVH entry. A VMM that
 * reads the XEN_ELFNOTE_PHYS32_ENTRY note below (QEMU's -kernel on the pc and
 * microvm machines, Firecracker) loads the image's segments at their physical
 * addresses itself and jumps to pvh_entry in 32-bit protected mode, paging
 * off, interrupts off, with %ebx = the physical address of its start-of-day
 * record (boot/pvh.h). We do what the multiboot loader would have:
 *
 *   - check, still in 32-bit code, that the CPU has CPUID, long mode, PAE,
 *     MSRs and a TSC (without them the steps below fault with no handler, a
 *     triple fault that reads like a clean stop); the rest of the loader's
 *     list is checked in C (pvh_boot.c) before anything uses it;
 *   - read the TSC, the boot's time zero, as the loader does on its first line;
 *   - map memory one-to-one: the first 4 GiB in 2 MiB pages (RAM, the PCI
 *     hole's devices, the LAPIC and I/O APIC) and, where the CPU has 1 GiB
 *     pages, the rest of the first 512 GiB in those, so RAM above 4 GiB is
 *     mapped while the kernel builds its own tables from it (kmem_init). The
 *     map is writable and executable everywhere: the kernel replaces it with
 *     its W^X tables in kmem_init, its fourth step;
 *   - enter long mode on the boot stack, and call pvh_boot(start info), which
 *     fills a struct bootinfo from the VMM's record and returns it;
 *   - jump to _start (start.S) with it in %rdi, as the loader does.
 *
 * The tables lie in .bss, inside the image's load range, so kmem_init keeps
 * them until it has switched away. The ELF loader of the VMM clears .bss (an
 * ELF segment's memory past its file bytes reads as zero).
 */
#include "loader/cpu.h"

#define CR0_PE    (1 << 0)
#define CR0_PG    (1 << 31)
#define CR4_PAE   (1 << 5)
#define EFER_MSR  0xC0000080
#define EFER_LME  (1 << 8)
#define PTE_P     0x1
#define PTE_W     0x2
#define PTE_PS    0x80
#define EFLAGS_ID (1 << 21)
#define COM1      0x3f8
#define DEBUG_EXIT_PORT 0xf4
#define PVH_NOTE_ENTRY  18 /* XEN_ELFNOTE_PHYS32_ENTRY (boot/pvh.h) */

/*
 * The note: namesz, descsz, type, "Xen", then the entry's address. QEMU
 * reads the address as a size_t (8 bytes on a 64-bit host) and aligns the
 * name by the note segment's alignment, so the address gets 8 bytes and
 * the section 4-byte alignment (kernel.ld puts it in a PT_NOTE segment).
 */
	.section .note.pvh, "a", @note
	.balign 4
	.long 4                    /* namesz: "Xen" and its NUL */
	.long 8                    /* descsz */
	.long PVH_NOTE_ENTRY
	.asciz "Xen"
	.quad pvh_entry

	.code32
	.section .text.pvh, "ax"
	.globl pvh_entry
	.type pvh_entry, @function
pvh_entry:
	cli
	cld
	/* The ABI promises flat CS, DS and ES, not SS: our own GDT's segments
	 * before the first push. */
	lgdt pvh_gdt_ptr
	movl $0x10, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	ljmp $0x18, $1f
1:	movl $boot_stack_top, %esp
	movl %ebx, %esi            /* the start info, kept for pvh_boot */
	call pvh_check_cpu         /* returns only if the steps below can run */
	rdtsc
	movl %eax, pvh_tsc_at_entry
	movl %edx, pvh_tsc_at_entry + 4

	/* PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 2 MiB pages. */
	movl $pvh_pdpt, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, pvh_pml4
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $12, %eax
	addl $pvh_pd, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, pvh_pdpt(, %ecx, 8)
	incl %ecx
	cmpl $4, %ecx
	jne 1b
	xorl %ecx, %ecx            /* 2048 entries: 4 GiB */
2:	movl %ecx, %eax
	shll $21, %eax
	orl $(PTE_P | PTE_W | PTE_PS), %eax
	movl %eax, pvh_pd(, %ecx, 8)
	movl %ecx, %eax
	shrl $11, %eax             /* the address's high half: ecx * 2 MiB >> 32 */
	movl %eax, pvh_pd + 4(, %ecx, 8)
	incl %ecx
	cmpl $2048, %ecx
	jne 2b

	/* PDPT[4..511]: 1 GiB pages, where the CPU has them. */
	movl $4, pvh_mapped_gib
	movl $0x80000001, %eax
	cpuid
	testl $(1 << 26), %edx     /* CPUID.80000001H:EDX.Page1GB */
	jz 4f
	movl $4, %ecx
3:	movl %ecx, %eax
	shll $30, %eax
	orl $(PTE_P | PTE_W | PTE_PS), %eax
	movl %eax, pvh_pdpt(, %ecx, 8)
	movl %ecx, %eax
	shrl $2, %eax              /* ecx GiB >> 32 */
	movl %eax, pvh_pdpt + 4(, %ecx, 8)
	incl %ecx
	cmpl $512, %ecx
	jne 3b
	movl $512, pvh_mapped_gib
4:
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $pvh_pml4, %eax
	movl %eax, %cr3
	movl $EFER_MSR, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $(CR0_PG | CR0_PE), %eax
	movl %eax, %cr0
	ljmp $0x08, $pvh_long_mode

/* Clobbers eax, ebx, ecx, edx; esi survives. */
pvh_check_cpu:
	pushfl                     /* CPUID exists when EFLAGS.ID can be flipped */
	popl %eax
	movl %eax, %ecx
	xorl $EFLAGS_ID, %eax
	pushl %eax
	popfl
	pushfl
	popl %eax
	pushl %ecx                 /* the flags as they were */
	popfl
	xorl %ecx, %eax
	movl $pvh_no_cpuid, %ebx
	testl $EFLAGS_ID, %eax
	jz pvh_cpu_fail
	movl $0x80000000, %eax
	cpuid
	movl $pvh_no_long_mode, %ebx
	cmpl $0x80000001, %eax
	jb pvh_cpu_fail
	movl $0x80000001, %eax
	cpuid
	movl $pvh_no_long_mode, %ebx
	testl $(1 << 29), %edx     /* CPUID.80000001H:EDX.LM */
	jz pvh_cpu_fail
	movl $1, %eax
	cpuid
	movl $pvh_no_pae, %ebx
	testl $(1 << 6), %edx      /* CPUID.1:EDX.PAE */
	jz pvh_cpu_fail
	movl $pvh_no_msr, %ebx
	testl $(1 << 5), %edx      /* CPUID.1:EDX.MSR */
	jz pvh_cpu_fail
	movl $pvh_no_tsc, %ebx
	testl $(1 << 4), %edx      /* CPUID.1:EDX.TSC */
	jz pvh_cpu_fail
	ret

/* "kernel: error: " the reason at %ebx and the exit line on COM1 (polled;
 * the UART needs no set-up to send), then end QEMU through isa-debug-exit
 * with LOADER_NO_CPU_FEATURE, as the loader does for the same CPU. */
pvh_cpu_fail:
	movl $pvh_error_prefix, %ecx
	call pvh_puts32
	movl %ebx, %ecx
	call pvh_puts32
	movl $pvh_exit_line, %ecx
	call pvh_puts32
	movw $(COM1 + 5), %dx      /* until the UART has sent it all (TEMT) */
1:	inb %dx, %al
	testb $0x40, %al
	jz 1b
	movb $LOADER_NO_CPU_FEATURE, %al
	outb %al, $DEBUG_EXIT_PORT
2:	hlt
	jmp 2b

/* The NUL-terminated string at %ecx to COM1. Clobbers eax, ecx, edx. */
pvh_puts32:
	movw $(COM1 + 5), %dx
1:	inb %dx, %al               /* transmitter holding register empty? */
	testb $0x20, %al
	jz 1b
	movb (%ecx), %al
	testb %al, %al
	jz 2f
	movw $COM1, %dx
	outb %al, %dx
	incl %ecx
	jmp pvh_puts32
2:	ret

	.code64
pvh_long_mode:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movl %esi, %edi            /* pvh_boot(start info), zero-extended */
	xorl %ebp, %ebp
	call pvh_boot              /* returns the bootinfo record, or ends the boot */
	movq %rax, %rdi
	jmp _start

	.section .rodata
/* The same words as the loader's for the same CPU (loader/entry.S). */
pvh_error_prefix: .asciz "kernel: error: "
pvh_no_cpuid:	.asciz "the CPU has no CPUID instruction (the kernel reads the CPU's features with it)"
pvh_no_long_mode: .asciz "the CPU has no long mode (the image is 64-bit code)"
pvh_no_pae:	.asciz "the CPU has no PAE (long mode's page tables need it)"
pvh_no_msr:	.asciz "the CPU has no MSRs (long mode is turned on through one)"
pvh_no_tsc:	.asciz "the CPU has no TSC (the kernel's clock counts it)"
#define STR(x) #x
#define XSTR(x) STR(x)
pvh_exit_line:	.ascii "\r\nkernel: exit status "
		.ascii XSTR(LOADER_NO_CPU_FEATURE)
		.asciz "\r\n"

	.balign 8
pvh_gdt:
	.quad 0
	/* Accessed bits preset: the CPU would otherwise write them on a
	 * segment load, and this page is read-only once kmem_init has run. */
	.quad 0x00af9b000000ffff   /* 0x08: 64-bit code */
	.quad 0x00cf93000000ffff   /* 0x10: data */
	.quad 0x00cf9b000000ffff   /* 0x18: 32-bit code, until long mode */
pvh_gdt_end:
pvh_gdt_ptr:
	.word pvh_gdt_end - pvh_gdt - 1
	.long pvh_gdt

	.section .bss
	.balign 4096
pvh_pml4:	.skip 4096
pvh_pdpt:	.skip 4096
pvh_pd:		.skip 4 * 4096
	.balign 8
	.globl pvh_tsc_at_entry, pvh_mapped_gib
pvh_tsc_at_entry: .skip 8          /* the TSC at pvh_entry */
pvh_mapped_gib:	.skip 4            /* GiB the boot map covers: 4, or 512 with 1 GiB pages */
