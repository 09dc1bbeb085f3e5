/*
 * The wdm.h items mingw-w64's ddk/wdm.h lacks, transcribed from the Windows Driver Kit's wdm.h as
 * the DDI reference documents it. Include after <ddk/wdm.h> (prelude_ddk.h).
 */
#ifndef DCBNDK_WDM_EXTRA_H
#define DCBNDK_WDM_EXTRA_H

/* wdm.h (Windows 8 and later): a flag ORed into the MM_PAGE_PRIORITY of a mapping, for a
 * no-execute mapping (the DDI pages of MmGetSystemAddressForMdlSafe and
 * MmMapLockedPagesSpecifyCache). */
#define MdlMappingNoExecute 0x40000000

/* wdm.h (and winnt.h): the AVX state's bit of the extended-state masks of
 * KeSaveExtendedProcessorState and RtlGetEnabledExtendedFeatures, XSTATE_MASK_GSSE, bit
 * XSTATE_GSSE (2) of XCR0. mingw-w64 has it in winnt.h only, which prelude_ddk.h cannot include. */
#define XSTATE_MASK_AVX (1ULL << 2)

/* wdm.h (and winnt.h): the AVX-512 state's bits, XSTATE_AVX512_KMASK (5), XSTATE_AVX512_ZMM_H (6)
 * and XSTATE_AVX512_ZMM (7) of XCR0: the opmask registers, the upper halves of ZMM0-ZMM15, and
 * ZMM16-ZMM31. */
#define XSTATE_MASK_AVX512 ((1ULL << 5) | (1ULL << 6) | (1ULL << 7))

#endif
