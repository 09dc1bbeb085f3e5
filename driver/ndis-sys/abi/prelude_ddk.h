/* The mingw-w64 kernel headers the ABI checks compile the wdm.h items against (the MDL and its
 * flags, MM_PAGE_PRIORITY, MODE, MEMORY_CACHING_TYPE). A unit of its own: ddk/wdm.h redeclares
 * what the user-mode headers of prelude.h declare, so the two cannot share one file. */
#include <ddk/wdm.h>
#include <stddef.h>
#include "wdm_extra.h"
