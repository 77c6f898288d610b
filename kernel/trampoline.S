/*
 * trampoline.S: where an AP starts (see trampoline.h). The blob between
 * trampoline_start and trampoline_end is read-only data: the boot CPU copies
 * it into a page below 1 MiB and fills its data block, and a STARTUP IPI
 * starts the AP at the page's first byte, in real mode, interrupts off.
 *
 * Real mode: the one AP the boot CPU is starting (its APIC ID, from CPUID
 * leaf 1, is the data block's) goes on; any other counts itself a stray and
 * halts, so that an AP that answers late cannot run on the next one's stack.
 * It loads the blob's GDT, sets PE, and far-jumps to the 32-bit code. There
 * the page's address, computed from CS in real mode, stays in %ebx: the
 * data block is at a fixed offset from it. 32-bit: the boot CPU's CR4 (PAE),
 * the first page tables, EFER (LME, NXE), the boot CPU's CR0 (PG), and a far
 * jump through the 64-bit code segment into long mode. 64-bit: on to
 * smp_ap_entry in the kernel's text, which the first tables map too.
 *
 * Each step writes how far it got into the data block (TP_STAGE), for the
 * boot CPU's message when an AP does not come.
 */
#include "trampoline.h"

	.section .rodata
	.balign 16
	.globl trampoline_start, trampoline_end, trampoline_code32, trampoline_code64
	.code16
trampoline_start:
	cli
	cld
	movl $TRAMPOLINE_STAGE_REAL, %cs:TP_STAGE
	movl $1, %eax
	cpuid
	shrl $24, %ebx              /* CPUID.1:EBX[31:24]: this CPU's initial APIC ID */
	cmpb %cs:TP_APIC_ID, %bl
	jne 2f
	xorl %ebx, %ebx
	movw %cs, %bx
	shll $4, %ebx               /* the page's physical address */
	lgdtl %cs:TP_GDTR
	movl %cr0, %eax
	orl $1, %eax                /* PE */
	movl %eax, %cr0
	ljmpl *%cs:TP_FAR32
2:	lock incl %cs:TP_STRAYS     /* not the CPU being started: stop here */
3:	cli
	hlt
	jmp 3b

	.code32
trampoline_code32:
	movl $TRAMPOLINE_SEL_DATA, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	movl %eax, %fs
	movl %eax, %gs
	movl $TRAMPOLINE_STAGE_PROTECTED, TP_STAGE(%ebx)
	movl TP_CR4(%ebx), %eax
	movl %eax, %cr4
	movl TP_CR3_EARLY(%ebx), %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx      /* EFER */
	movl TP_EFER(%ebx), %eax
	movl TP_EFER + 4(%ebx), %edx
	wrmsr
	movl TP_CR0(%ebx), %eax     /* PG on: long mode, compatibility submode */
	movl %eax, %cr0
	ljmp *TP_FAR64(%ebx)

	.code64
trampoline_code64:
	movl %ebx, %ebx             /* a mode switch leaves the upper halves undefined */
	movl $TRAMPOLINE_STAGE_LONG, TP_STAGE(%rbx)
	jmp *TP_ENTRY(%rbx)

	/* The data block; an error here means the code outgrew TRAMPOLINE_DATA. */
	.org trampoline_start + TRAMPOLINE_DATA
	.quad 0
	.quad 0x00cf9b000000ffff    /* 0x08: 32-bit code, flat (accessed bit preset) */
	.quad 0x00cf93000000ffff    /* 0x10: data, flat */
	.quad 0x00af9b000000ffff    /* 0x18: 64-bit code */
	.word 4 * 8 - 1             /* the GDT pointer: limit; base filled in */
	.org trampoline_start + TRAMPOLINE_DATA_END
trampoline_end:

/*
 * The AP's first instructions in the kernel's text, on the trampoline's
 * first tables, with the page's address in %rbx: the kernel's page tables,
 * then the AP's stack (which may lie anywhere in RAM the kernel maps), then
 * C, which never returns.
 */
	.text
	.globl smp_ap_entry
	.type smp_ap_entry, @function
smp_ap_entry:
	movq TP_KERNEL_CR3(%rbx), %rax
	movq %rax, %cr3
	movq TP_STACK(%rbx), %rsp
	movq TP_PERCPU(%rbx), %rdi
	movl $TRAMPOLINE_STAGE_KERNEL, TP_STAGE(%rbx)
	xorl %ebp, %ebp             /* ends the backtrace's frame chain */
	fninit
	call smp_ap_main
1:	cli
	hlt
	jmp 1b

	/* No executable stack asked for (the host's linker reads this when the
	 * unit test links the blob; the kernel's script discards notes). */
	.section .note.GNU-stack, "", @progbits
