/* The mingw-w64 headers the ABI checks compile against, in the order they need. */
#define UM_NDIS630 1
#define WIN32_NO_STATUS
#include <winsock2.h>
#include <ws2ipdef.h>
#include <windows.h>
#undef WIN32_NO_STATUS
#include <ntstatus.h>
#include <winternl.h>
#include <ipifcons.h>
#include <ntddndis.h>
#include <ndkinfo.h>
#include <stddef.h>
#include "ndis630_extra.h"
#include "ndkpi_decl.h"
