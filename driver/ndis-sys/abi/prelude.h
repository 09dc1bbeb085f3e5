/* The mingw-w64 headers the ABI checks compile against, in the order they need. */
#define UM_NDIS630 1
#include <winsock2.h>
#include <ws2ipdef.h>
#include <windows.h>
#include <winternl.h>
#include <ipifcons.h>
#include <ntddndis.h>
#include <ndkinfo.h>
#include <stddef.h>
#include "ndis630_extra.h"
#include "ndkpi_decl.h"
