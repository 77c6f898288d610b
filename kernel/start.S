/*
 * start.S: the image's entry point. The loader jumps here in long mode, on its
 * own page tables and stack, with the bootinfo record in %rdi (under PVH,
 * pvh.S does, on its tables and this boot stack). We enable SSE
 * (compiled C may use it from its first instruction), point GS at the boot
 * CPU's per-CPU area, move to the kernel's boot stack and call
 * kernel_main(bootinfo), which never returns.
 */
	.section .text.start, "ax"
	.globl _start
	.type _start, @function
_start:
	cli
	movq %cr0, %rax
	andq $~(1 << 2), %rax       /* EM off: no x87 emulation */
	orq $(1 << 1), %rax         /* MP on */
	movq %rax, %cr0
	movq %cr4, %rax
	orq $((1 << 9) | (1 << 10)), %rax /* OSFXSR, OSXMMEXCPT */
	movq %rax, %cr4
	fninit
	/* The stack protector's canary, before any protected function runs:
	 * RDRAND when the CPU has it, mixed with the TSC; a zero low byte stops
	 * string overflows from copying it. */
	rdtsc
	shlq $32, %rdx
	orq %rax, %rdx
	movq %rdx, %r8
	movl $1, %eax
	cpuid
	btl $30, %ecx            /* CPUID.1:ECX.RDRAND */
	jnc 2f
	rdrand %rax
	xorq %rax, %r8
2:	shlq $8, %r8
	movq %r8, __stack_chk_guard(%rip)
	/* GS base: the boot CPU's per-CPU area (percpu.h), before any C that
	 * reads one (a kprintf takes the console's lock, which records its
	 * holder's CPU number). */
	movl $0xc0000101, %ecx      /* IA32_GS_BASE */
	leaq percpu_boot(%rip), %rax
	movq %rax, %rdx
	shrq $32, %rdx
	wrmsr
	leaq boot_stack_top(%rip), %rsp
	xorl %ebp, %ebp             /* ends the backtrace's frame chain */
	call kernel_main
1:	hlt
	jmp 1b

	.section .bss
	.balign 4096
	/* Left unmapped by mem_init: a stack overflow faults here (the page-fault
	 * handler runs on its own IST stack) instead of overwriting .bss. */
	.globl boot_stack_guard
boot_stack_guard:
	.skip 4096
	.globl boot_stack_bottom
boot_stack_bottom:
	.skip 256 * 1024
	.globl boot_stack_top       /* pvh.S runs on it before _start too */
boot_stack_top:
