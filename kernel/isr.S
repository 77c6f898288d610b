/*
 * isr.S: interrupt and exception entry. One small stub per vector pushes a
 * uniform (vector, error code) pair and jumps to isr_common, which saves the
 * general registers and the FPU/SSE state (so a handler may use any code),
 * calls trap_dispatch(struct trap_frame *) and returns with iretq.
 */
	.text

.macro STUB vec
	.balign 16
isr_\vec:
	.if !(\vec == 8 || (\vec >= 10 && \vec <= 14) || \vec == 17 || \vec == 21 || \vec == 29 || \vec == 30)
	pushq $0                    /* no error code from the CPU: push a zero */
	.endif
	pushq $\vec
	jmp isr_common
.endm

	.globl isr_stub_table
.altmacro
.macro STUBS from, to
	STUB \from
	.if \to-\from
	STUBS %(\from+1), \to
	.endif
.endm
	STUBS 0, 63
	STUBS 64, 127
	STUBS 128, 191
	STUBS 192, 255

isr_common:
	cld
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, %rdi             /* struct trap_frame * */
	movq %rsp, %rbx             /* callee-saved: where to come back to */
	subq $512, %rsp
	andq $-64, %rsp
	fxsave (%rsp)
	call trap_dispatch
	fxrstor (%rsp)
	movq %rbx, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp              /* vector and error code */
	iretq

	.section .rodata
	.balign 8
isr_stub_table:
.macro ADDR from, to
	.quad isr_\from
	.if \to-\from
	ADDR %(\from+1), \to
	.endif
.endm
	ADDR 0, 63
	ADDR 64, 127
	ADDR 128, 191
	ADDR 192, 255
