/*
 * exitcheck: a test image for the ways a guest can end other than by exit()
 * (test 07), each of which tools/qemu-run must tell apart from an exit
 * status:
 *
 *   exitcheck triple-fault      load an empty IDT and trap: no handler, so a
 *                               triple fault, and QEMU (-no-reboot) exits 0
 *   exitcheck fake-line N       print the kernel's exit line for N, then
 *                               triple-fault: a line is no exit
 *   exitcheck raw-port N        write N to isa-debug-exit with no exit line
 *   exitcheck mismatch N M      print the exit line for N, write M
 *
 * Anything else prints a usage line and exits 64.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/kernel.h"

#define DEBUG_EXIT_PORT 0xf4

static void port_write(int n)
{
	fflush(stdout);
	__asm__ volatile("outb %0, %1" : : "a"((uint8_t)n), "Nd"((uint16_t)DEBUG_EXIT_PORT));
}

static __attribute__((noreturn)) void triple_fault(void)
{
	struct __attribute__((packed)) {
		uint16_t limit;
		uint64_t base;
	} empty = { 0, 0 };
	fflush(stdout);
	__asm__ volatile("cli; lidt %0; ud2" : : "m"(empty));
	for (;;)
		;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0, m = argc > 3 ? atoi(argv[3]) : 0;
	if (strcmp(what, "triple-fault") == 0) {
		printf("exitcheck: triple fault\n");
		triple_fault();
	} else if (strcmp(what, "fake-line") == 0 && argc == 3) {
		printf(KERNEL_EXIT_LINE "%d\n", n);
		triple_fault();
	} else if (strcmp(what, "raw-port") == 0 && argc == 3) {
		printf("exitcheck: %d to the port, no exit line\n", n);
		port_write(n);
	} else if (strcmp(what, "mismatch") == 0 && argc == 4) {
		printf(KERNEL_EXIT_LINE "%d\n", n);
		port_write(m);
	}
	printf("usage: exitcheck triple-fault | fake-line N | raw-port N | mismatch N M\n");
	return 64;
}
