/*
 * entry.S: the loader's first instructions. QEMU's multiboot support enters
 * here in 32-bit protected mode with paging off, %eax = the multiboot magic and
 * %ebx = the multiboot information record. We build page tables that map the
 * first 4 GiB one-to-one with 2 MiB pages, enter long mode, and call
 * loader_main(magic, mbi) in 64-bit C. This boot map is writable and
 * executable everywhere and serves only while the image is loaded: the loader
 * switches to W^X tables (paging.c) before it jumps to the image, and turns on
 * EFER.NXE then, once C has checked that the CPU has NX.
 */
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
