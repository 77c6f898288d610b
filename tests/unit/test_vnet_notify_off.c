/*
 * test_vnet_notify_off.c: test_vnet_notify.c with the driver's repair off
 * (kernel option vnet_repair=0): the simulated device's miss modes then
 * stall the receive ring for good and leave a lost transmit kick to the
 * watchdog, which counts it as lost. So the modes do lose notifications, and
 * test_vnet_notify's recoveries are the repair's doing.
 */
#define VNET_REPAIR 0
#include "test_vnet_notify.c"
