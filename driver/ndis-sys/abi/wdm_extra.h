/*
 * The wdm.h item mingw-w64's ddk/wdm.h lacks, transcribed from the Windows Driver Kit's wdm.h as
 * the DDI reference documents it. Include after <ddk/wdm.h> (prelude_ddk.h).
 */
#ifndef DCBNDK_WDM_EXTRA_H
#define DCBNDK_WDM_EXTRA_H

/* wdm.h (Windows 8 and later): a flag ORed into the MM_PAGE_PRIORITY of a mapping, for a
 * no-execute mapping (the DDI pages of MmGetSystemAddressForMdlSafe and
 * MmMapLockedPagesSpecifyCache). */
#define MdlMappingNoExecute 0x40000000

#endif
