#Requires -Version 5.1
<#
.SYNOPSIS
Shows the dcbndk adapter's traffic per 802.1p priority and per traffic class, both ways, and the
frames whose headers it could not read to the end (the driver's vendor OID).

.DESCRIPTION
    .\Get-DcbndkTraffic.ps1 [-HardwareId root\dcbndk] [-AsObject]

Windows has no cmdlet for per-priority counters, so the driver answers its own query OID,
OID_DCBNDK_TRAFFIC_STATISTICS (0xFF440001; driver/core/src/adapter/traffic.rs has the layout).
The script opens the adapter's NDIS device (\\.\{InterfaceGuid}) and sends the OID with
IOCTL_NDIS_QUERY_GLOBAL_STATS (DeviceIoControl), which NDIS turns into a query OID request to the
miniport; then it checks the structure's header (type 0x80, revision 1, 552 bytes) and prints one
row per priority and per TC.

Steps (the script stops at the first one that fails and says which): find the adapter, query the
OID, decode it.

.PARAMETER HardwareId
The device's hardware id (default root\dcbndk).

.PARAMETER AsObject
Return the rows as objects instead of printing tables.
#>
[CmdletBinding()]
param(
    [string] $HardwareId = 'root\dcbndk',
    [switch] $AsObject
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

$OidTrafficStatistics = [uint32] 0xFF440001
$StatisticsSize = 552

if (-not ('Dcbndk.NdisQuery' -as [type])) {
    Add-Type -TypeDefinition @'
using System;
using System.ComponentModel;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Dcbndk {
    public static class NdisQuery {
        // CTL_CODE(FILE_DEVICE_PHYSICAL_NETCARD, 0, METHOD_OUT_DIRECT, FILE_ANY_ACCESS)
        const uint IOCTL_NDIS_QUERY_GLOBAL_STATS = 0x00170002;

        [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
        static extern SafeFileHandle CreateFileW(string name, uint access, uint share,
            IntPtr security, uint disposition, uint flags, IntPtr template);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool DeviceIoControl(SafeFileHandle device, uint code, byte[] input,
            uint inputLength, byte[] output, uint outputLength, out uint returned, IntPtr overlapped);

        // Queries `oid` of the adapter whose interface GUID is `guid`; the bytes it answered.
        public static byte[] Query(string guid, uint oid, int size) {
            string path = "\\\\.\\" + guid;
            using (SafeFileHandle h = CreateFileW(path, 0, 3, IntPtr.Zero, 3, 0, IntPtr.Zero)) {
                if (h.IsInvalid) {
                    throw new Win32Exception(Marshal.GetLastWin32Error(), "CreateFile " + path);
                }
                byte[] output = new byte[size];
                uint returned;
                if (!DeviceIoControl(h, IOCTL_NDIS_QUERY_GLOBAL_STATS, BitConverter.GetBytes(oid), 4,
                        output, (uint)size, out returned, IntPtr.Zero)) {
                    throw new Win32Exception(Marshal.GetLastWin32Error(),
                        "IOCTL_NDIS_QUERY_GLOBAL_STATS 0x" + oid.ToString("X8"));
                }
                Array.Resize(ref output, (int)returned);
                return output;
            }
        }
    }
}
'@
}

$adapter = Invoke-DcbndkStep 'Find the adapter' {
    Get-DcbndkAdapter -HardwareId $HardwareId
}

$bytes = Invoke-DcbndkStep 'Query OID_DCBNDK_TRAFFIC_STATISTICS' {
    , [Dcbndk.NdisQuery]::Query($adapter.InterfaceGuid, $OidTrafficStatistics, $StatisticsSize)
}

$rows = Invoke-DcbndkStep 'Decode the statistics' {
    if ($bytes.Length -ne $StatisticsSize) {
        throw "The adapter answered $($bytes.Length) bytes, expected $StatisticsSize."
    }
    $size = [BitConverter]::ToUInt16($bytes, 2)
    if ($bytes[0] -ne 0x80 -or $bytes[1] -ne 1 -or $size -ne $StatisticsSize) {
        throw "Unexpected header: type $($bytes[0]), revision $($bytes[1]), size $size."
    }
    $counter = { param([int] $Index) [BitConverter]::ToUInt64($bytes, 8 + 8 * $Index) }
    $result = New-Object System.Collections.ArrayList
    foreach ($kind in @('Priority', 'TrafficClass')) {
        $base = if ($kind -eq 'Priority') { 0 } else { 32 }
        foreach ($i in 0..7) {
            [void] $result.Add([pscustomobject]@{
                    Kind          = $kind
                    Index         = $i
                    SentFrames    = & $counter ($base + $i)
                    SentBytes     = & $counter ($base + 8 + $i)
                    ReceivedFrames = & $counter ($base + 16 + $i)
                    ReceivedBytes = & $counter ($base + 24 + $i)
                })
        }
    }
    [pscustomobject]@{
        Rows                 = $result
        SentTruncated        = & $counter 64
        SentMalformed        = & $counter 65
        ReceivedTruncated    = & $counter 66
        ReceivedMalformed    = & $counter 67
    }
}

if ($AsObject) {
    return $rows
}
Write-Output "Traffic of $($adapter.Name) ($($adapter.InterfaceDescription))"
$rows.Rows | Where-Object { $_.Kind -eq 'Priority' } |
    Format-Table -Property Index, SentFrames, SentBytes, ReceivedFrames, ReceivedBytes -AutoSize |
    Out-String | Write-Output
$rows.Rows | Where-Object { $_.Kind -eq 'TrafficClass' } |
    Format-Table -Property Index, SentFrames, SentBytes, ReceivedFrames, ReceivedBytes -AutoSize |
    Out-String | Write-Output
Write-Output ("Headers cut short: sent $($rows.SentTruncated), received $($rows.ReceivedTruncated); " +
    "invalid: sent $($rows.SentMalformed), received $($rows.ReceivedMalformed)")
