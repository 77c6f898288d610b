/*
 * hypervisor.c: which hypervisor runs us, from CPUID: leaf 1's "hypervisor
 * present" bit (ECX bit 31), then the vendor signature in leaf 0x40000000's
 * EBX, ECX, EDX. QEMU's TCG says "TCGTCGTCGTCG", KVM "KVMKVMKVM\0\0\0". Read
 * once; the answer does not change while we run.
 */
#include <string.h>
#include "arch.h"
#include "kernel.h"

#define CPUID_1_ECX_HYPERVISOR (1u << 31)

static enum hypervisor detect(void)
{
	uint32_t r[4];
	cpuid(1, 0, r);
	if (!(r[2] & CPUID_1_ECX_HYPERVISOR))
		return HV_NONE;
	cpuid(0x40000000, 0, r);
	char sig[13];
	memcpy(sig, &r[1], 4);
	memcpy(sig + 4, &r[2], 4);
	memcpy(sig + 8, &r[3], 4);
	sig[12] = '\0';
	if (!strcmp(sig, "TCGTCGTCGTCG"))
		return HV_TCG;
	if (!strcmp(sig, "KVMKVMKVM"))
		return HV_KVM;
	return HV_OTHER;
}

enum hypervisor cpu_hypervisor(void)
{
	static int cached = -1;
	if (cached < 0)
		cached = (int)detect();
	return (enum hypervisor)cached;
}

const char *cpu_hypervisor_name(enum hypervisor hv)
{
	switch (hv) {
	case HV_NONE: return "none";
	case HV_TCG: return "tcg";
	case HV_KVM: return "kvm";
	default: return "other";
	}
}
