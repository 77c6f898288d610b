"""workloads: the plug-ins a batch's spec names (workload = "NAME").

Each module holds a class Workload(spec) that checks the spec's settings
(SpecError on a bad one) and offers
    plan()          the batch's steps (batch.Step), in the order they run
    start(batch)    meta.txt's lines of its own, record headers, probes
    finish(batch)   closing lines and the tables (report/); bench/run's exit
                    status (0, or 1 when a check the workload makes failed)
    cleanup()       whatever a step left running (a guest, a namespace),
                    also after an interrupt

    http        httpd under ab/wrk in each guest (make bench, bench-fixes)
    bulk        iperf3 and large HTTP bodies (make bench-bulk)
    soak        a long run that must fail nothing and leak nothing (make soak)
    kvm         VM exits per request under nested KVM (make bench-kvm)
    costs       the primitives' costs under TCG and nested KVM (make bench-costs)
    kvm_stress  nested-KVM boots hunting wedges (make kvm-stress)
    density     how many guests serve at once, started how fast, idle at what cost (make density)
    boot        boot to first answer, guest boot time, memory (make bench-boot)
"""
