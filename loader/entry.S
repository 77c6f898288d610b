/*
 * entry.S: the loader's first instructions. QEMU's multiboot support enters
 * here in 32-bit protected mode with paging off, %eax = the multiboot magic and
 * %ebx = the multiboot information record. We build page tables that map the
 * first 4 GiB one-to-one with 2 MiB pages, enter long mode, and call
 * loader_main(magic, mbi) in 64-bit C. This boot map is writable and
 * executable everywhere and serves only while the image is loaded: the loader
 * switches to W^X tables (paging.c) before it jumps to the image, and turns on
 * EFER.NXE then, once C has checked that the CPU has NX.
 *
 * First, still in 32-bit code, it checks that the CPU can enter long mode at
 * all (CPUID, long mode, PAE, MSRs): without one of them the steps below would
 * fault with no handler, a triple fault that reads like a clean stop. A CPU
 * that lacks one gets the same one-line reason and exit status as cpu.c's
 * checks (LOADER_NO_CPU_FEATURE).
 */
#include "cpu.h"
#include "multiboot.h"

#define MB_FLAGS (MULTIBOOT_PAGE_ALIGN | MULTIBOOT_MEMORY_INFO)

#define CR0_PE   (1 << 0)
#define CR0_PG   (1 << 31)
#define CR4_PAE  (1 << 5)
#define EFER_MSR 0xC0000080
#define EFER_LME (1 << 8)
#define PTE_P    0x1
#define PTE_W    0x2
#define PTE_PS   0x80
#define EFLAGS_ID (1 << 21)
#define COM1     0x3f8
#define DEBUG_EXIT_PORT 0xf4

	.section .multiboot, "a"
	.balign 4
	.long MULTIBOOT_HEADER_MAGIC
	.long MB_FLAGS
	.long -(MULTIBOOT_HEADER_MAGIC + MB_FLAGS)

	.code32
	.section .text.entry, "ax"
	.globl _start
_start:
	cli
	movl $stack_top, %esp
	movl %eax, %edi            /* saved for loader_main: magic */
	movl %ebx, %esi            /* and the multiboot info */
	call check_long_mode       /* returns only if the CPU can enter long mode */

	/* PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 2 MiB pages. */
	movl $pdpt, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, pml4
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $12, %eax
	addl $pd, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, pdpt(, %ecx, 8)
	incl %ecx
	cmpl $4, %ecx
	jne 1b

	xorl %ecx, %ecx            /* 2048 entries: 4 GiB */
2:	movl %ecx, %eax
	shll $21, %eax
	orl $(PTE_P | PTE_W | PTE_PS), %eax
	movl %eax, pd(, %ecx, 8)
	movl %ecx, %eax
	shrl $11, %eax             /* high half of the address: ecx * 2M >> 32 */
	movl %eax, pd + 4(, %ecx, 8)
	incl %ecx
	cmpl $2048, %ecx
	jne 2b

	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $pml4, %eax
	movl %eax, %cr3
	movl $EFER_MSR, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $(CR0_PG | CR0_PE), %eax
	movl %eax, %cr0

	lgdt gdt_ptr
	ljmp $0x08, $long_mode

/* Clobbers eax, ebx, ecx, edx; edi and esi survive. */
check_long_mode:
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
	movl $no_cpuid, %ebx
	testl $EFLAGS_ID, %eax
	jz cpu_fail
	movl $0x80000000, %eax
	cpuid
	movl $no_long_mode, %ebx
	cmpl $0x80000001, %eax
	jb cpu_fail
	movl $0x80000001, %eax
	cpuid
	movl $no_long_mode, %ebx
	testl $(1 << 29), %edx     /* CPUID.80000001H:EDX.LM */
	jz cpu_fail
	movl $1, %eax
	cpuid
	movl $no_pae, %ebx
	testl $(1 << 6), %edx      /* CPUID.1:EDX.PAE */
	jz cpu_fail
	movl $no_msr, %ebx
	testl $(1 << 5), %edx      /* CPUID.1:EDX.MSR */
	jz cpu_fail
	ret

/* Print "loader: error: " the reason at %ebx, and the exit line, on COM1
 * (polled; QEMU's UART needs no set-up), then end QEMU through isa-debug-exit
 * with LOADER_NO_CPU_FEATURE. */
cpu_fail:
	movl $error_prefix, %ecx
	call puts32
	movl %ebx, %ecx
	call puts32
	movl $exit_line, %ecx
	call puts32
	movw $(COM1 + 5), %dx      /* wait until the UART has sent it all (TEMT) */
1:	inb %dx, %al
	testb $0x40, %al
	jz 1b
	movb $LOADER_NO_CPU_FEATURE, %al
	outb %al, $DEBUG_EXIT_PORT
2:	hlt
	jmp 2b

/* The NUL-terminated string at %ecx to COM1. Clobbers eax, ecx, edx. */
puts32:
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
	jmp puts32
2:	ret

	.code64
long_mode:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movl %edi, %edi            /* zero-extend magic and mbi */
	movl %esi, %esi
	xorl %ebp, %ebp
	call loader_main
3:	hlt
	jmp 3b

	.section .rodata
/* The same words as cpu.c's reasons and loader.c's fail(). */
error_prefix:	.asciz "loader: error: "
no_cpuid:	.asciz "the CPU has no CPUID instruction (the loader reads the CPU's features with it)"
no_long_mode:	.asciz "the CPU has no long mode (the image is 64-bit code)"
no_pae:		.asciz "the CPU has no PAE (long mode's page tables need it)"
no_msr:		.asciz "the CPU has no MSRs (long mode is turned on through one)"
#define STR(x) #x
#define XSTR(x) STR(x)
exit_line:	.ascii "\r\nloader: exit status "
		.ascii XSTR(LOADER_NO_CPU_FEATURE)
		.asciz "\r\n"

	.balign 8
gdt:
	.quad 0
	/* Accessed bits preset: the CPU would otherwise set them on a segment
	 * load, a write this read-only page refuses once CR0.WP is on. */
	.quad 0x00af9b000000ffff   /* 0x08: 64-bit code */
	.quad 0x00cf93000000ffff   /* 0x10: data */
gdt_end:
gdt_ptr:
	.word gdt_end - gdt - 1
	.long gdt

	.section .bss
	.balign 4096
pml4:	.skip 4096
pdpt:	.skip 4096
pd:	.skip 4 * 4096
	.balign 16
stack:	.skip 16384
stack_top:
