#Requires -Version 5.1
<#
.SYNOPSIS
Compares what Windows shows for the NDK (RDMA) side of one dcbndk adapter with what the driver
advertises: Get-NetAdapterRdma and its RdmaAdapterInfo, Get-NetAdapterHardwareInfo,
Get-SmbClientNetworkInterface, Get-NetOffloadGlobalSetting and the RdmaStatistics of
Get-NetAdapterStatistics.

.DESCRIPTION
    .\Test-DcbndkRdma.ps1 [-HardwareId root\dcbndk] [-IPAddress 198.18.21.1] [-PrefixLength 24]

Run it after Install-Dcbndk.ps1, on one VM, with the adapter's *NetworkDirect keyword 1 (the
INF's default). Steps (the script stops at the first one that fails and says which):
 1. checks it runs elevated, finds the adapter and checks *NetworkDirect = 1;
 2. gives the adapter the static address -IPAddress (recorded; Uninstall-Dcbndk.ps1 removes it
    and turns DHCP back on if it was on), so that SMB lists its interface;
 3. shows Get-NetAdapterRdma | Format-List * with its RdmaAdapterInfo,
    Get-NetAdapterHardwareInfo, Get-SmbClientNetworkInterface, Get-NetOffloadGlobalSetting and
    (Get-NetAdapterStatistics).RdmaStatistics;
 4. compares them with the driver's values, retrying for up to -TimeoutSeconds (the SMB client
    learns of a new interface and address asynchronously), and prints PASS / FAIL per
    expectation, INFO for what this Windows does not show, and "N passed, M failed".

The expected values are the driver's NDK profile (dcbndk_core::ndk::Profile::ROCE_V2_100G,
driver/core/src/ndk/mod.rs), with the SimNdk* keywords overriding some of them as
driver/core/src/adapter/config.rs (decide_ndk) does: the table $DcbndkRdmaExpected below.
tests/src/conformance/powershell.rs checks that table against the Get-NetAdapterRdma view the
simulated adapter renders (tests/src/views/rdma.rs), keyword by keyword, so that the two
cannot drift apart.

Exits 0 when every expectation holds, 1 otherwise. Not run on a VM by the project yet.

.PARAMETER HardwareId
Which dcbndk adapter: root\dcbndk (default) or root\dcbndk_b.

.PARAMETER IPAddress
The static IPv4 address to give the adapter. The default is from 198.18.0.0/15, the range set
aside for network benchmark tests (RFC 2544), so it should not clash with the VM's own network.

.PARAMETER PrefixLength
The address's prefix length (default 24).

.PARAMETER TimeoutSeconds
How long to wait for the views to match (default 30).

.PARAMETER ReportPath
Also write the results as JSON to this file.
#>
[CmdletBinding()]
param(
    [ValidateSet('root\dcbndk', 'root\dcbndk_b')] [string] $HardwareId = 'root\dcbndk',
    [string] $IPAddress = '198.18.21.1',
    [ValidateRange(1, 32)] [int] $PrefixLength = 24,
    [ValidateRange(0, 600)] [int] $TimeoutSeconds = 30,
    [string] $ReportPath = ''
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')
. (Join-Path $PSScriptRoot 'DcbndkRdmaCommon.ps1')

# What the driver advertises, property by property. View: 'Rdma' is Get-NetAdapterRdma itself
# (MSFT_NetAdapterRdmaSettingData, from NDIS_NDK_CAPABILITIES), 'AdapterInfo' its RdmaAdapterInfo
# (MSFT_NetAdapter_RdmaAdapterInfo, from NDK_ADAPTER_INFO; property names as that class's MOF).
# A row with Keyword takes the keyword's value when the keyword accepts it (Min..Max), Default
# otherwise. One row per line: tests/src/conformance/powershell.rs reads them.
$DcbndkRdmaExpected = @(
    @{ View = 'Rdma'; Property = 'MaxQueuePairCount'; Keyword = 'SimNdkMaxQueuePairs'; Min = 1; Max = 16777216; Default = 131072 }
    @{ View = 'Rdma'; Property = 'MaxCompletionQueueCount'; Keyword = 'SimNdkMaxCompletionQueues'; Min = 1; Max = 16777216; Default = 65536 }
    @{ View = 'Rdma'; Property = 'MaxMemoryRegionCount'; Keyword = 'SimNdkMaxMemoryRegions'; Min = 1; Max = 16777216; Default = 524288 }
    @{ View = 'Rdma'; Property = 'MaxProtectionDomainCount'; Value = 32768 }
    @{ View = 'Rdma'; Property = 'MaxInboundReadLimit'; Value = 16 }
    @{ View = 'Rdma'; Property = 'MaxOutboundReadLimit'; Value = 16 }
    @{ View = 'Rdma'; Property = 'MaxMemoryWindowCount'; Value = 0 }
    @{ View = 'Rdma'; Property = 'MaxSharedReceiveQueueCount'; Value = 8192 }
    @{ View = 'AdapterInfo'; Property = 'MajorVersionNumber'; Value = 1 }
    @{ View = 'AdapterInfo'; Property = 'MinorVersionNumber'; Value = 2 }
    @{ View = 'AdapterInfo'; Property = 'VendorId'; Value = 16777215 }
    @{ View = 'AdapterInfo'; Property = 'DeviceId'; Value = 56496 }
    @{ View = 'AdapterInfo'; Property = 'MaxRegistrationSize'; Value = 1099511627776 }
    @{ View = 'AdapterInfo'; Property = 'MaxWindowSize'; Value = 0 }
    @{ View = 'AdapterInfo'; Property = 'FRMRPageCount'; Keyword = 'SimNdkFRMRPageCount'; Min = 16; Max = 65536; Default = 256 }
    @{ View = 'AdapterInfo'; Property = 'MaxInitiatorRequestSge'; Keyword = 'SimNdkMaxSge'; Min = 1; Max = 256; Default = 16 }
    @{ View = 'AdapterInfo'; Property = 'MaxReceiveRequestSge'; Keyword = 'SimNdkMaxSge'; Min = 1; Max = 256; Default = 16 }
    @{ View = 'AdapterInfo'; Property = 'MaxReadRequestSge'; Keyword = 'SimNdkMaxSge'; Min = 1; Max = 256; Default = 16 }
    @{ View = 'AdapterInfo'; Property = 'MaxTransferLength'; Value = 1073741824 }
    @{ View = 'AdapterInfo'; Property = 'MaxInlineDataSize'; Value = 256 }
    @{ View = 'AdapterInfo'; Property = 'MaxInboundReadLimit'; Value = 16 }
    @{ View = 'AdapterInfo'; Property = 'MaxOutboundReadLimit'; Value = 16 }
    @{ View = 'AdapterInfo'; Property = 'MaxReceiveQueueDepth'; Value = 16384 }
    @{ View = 'AdapterInfo'; Property = 'MaxInitiatorQueueDepth'; Value = 16384 }
    @{ View = 'AdapterInfo'; Property = 'MaxSharedReceiveQueueDepth'; Value = 16384 }
    @{ View = 'AdapterInfo'; Property = 'MaxCompletionQueueDepth'; Value = 4194303 }
    @{ View = 'AdapterInfo'; Property = 'LargeRequestThreshold'; Value = 16384 }
    @{ View = 'AdapterInfo'; Property = 'MaxCallerData'; Value = 56 }
    @{ View = 'AdapterInfo'; Property = 'MaxCalleeData'; Value = 196 }
    @{ View = 'AdapterInfo'; Property = 'InOrderDMA'; Value = $true }
    @{ View = 'AdapterInfo'; Property = 'SupportsCompletionQueueResize'; Value = $true }
    @{ View = 'AdapterInfo'; Property = 'SupportsLoopbackConnections'; Value = $true }
)

# The counters of MSFT_NetAdapter_RdmaStatistics, index-aligned with
# NDIS_NDK_PERFORMANCE_COUNTERS (tests/src/views/rdma.rs RDMA_STATISTICS; the conformance test
# checks that this list is that one).
$DcbndkRdmaCounters = @(
    'InitiatedConnections', 'AcceptedConnections', 'FailedConnectionAttempts', 'ConnectionErrors',
    'ActiveConnections', 'CreatedQueuePairs', 'ClosedQueuePairs', 'CreatedCompletionQueues',
    'ClosedCompletionQueues', 'CreatedMemoryRegions', 'ClosedMemoryRegions', 'CreatedMemoryWindows',
    'ClosedMemoryWindows', 'CreatedSharedReceiveQueues', 'ClosedSharedReceiveQueues',
    'InboundReadRequests', 'OutboundReadRequests', 'InboundWriteRequests', 'OutboundWriteRequests',
    'SendRequests', 'ReceiveRequests', 'BindRequests', 'FastRegisterRequests', 'InvalidateRequests',
    'QueuePairErrors', 'CompletionQueueErrors', 'InboundBytes', 'OutboundBytes', 'InboundFrames',
    'OutboundFrames')

# NDK_RDMA_TECHNOLOGY (ndkinfo.h), the values of *NetworkDirectTechnology; the INF offers 1 and 4.
$DcbndkRdmaTechnologies = @{ 0 = 'Undefined'; 1 = 'iWarp'; 2 = 'InfiniBand'; 3 = 'RoCE'; 4 = 'RoCEv2' }

function Get-DcbndkExpectedValue {
    <# The value a row of $DcbndkRdmaExpected expects on this adapter. #>
    param([hashtable] $Row, [string] $AdapterName)
    if ($Row.ContainsKey('Keyword')) {
        return (Get-DcbndkKeywordValue -AdapterName $AdapterName -Keyword $Row['Keyword'] -Default $Row['Default'] -Min $Row['Min'] -Max $Row['Max'])
    }
    return $Row['Value']
}

function Test-DcbndkRdmaExpectation {
    <# One result per expectation against the adapter's current views. #>
    param($Adapter, [string] $IPAddress)
    $results = New-Object System.Collections.ArrayList
    $name = $Adapter.Name
    $rdma = Get-NetAdapterRdma -Name $name -ErrorAction SilentlyContinue
    $info = $null
    if ($null -ne $rdma -and (Test-DcbndkHasMember -Object $rdma -Name 'RdmaAdapterInfo')) {
        $info = $rdma.RdmaAdapterInfo
    }

    # Get-NetAdapterRdma: the NDK switch and the capabilities NDIS took from the driver.
    $null = $results.Add((New-DcbndkCheck -Check 'rdma.Enabled' -Expected $true -Actual (Get-DcbndkMember -Object $rdma -Name 'Enabled')))
    foreach ($row in $DcbndkRdmaExpected) {
        $expected = Get-DcbndkExpectedValue -Row $row -AdapterName $name
        if ($row['View'] -eq 'Rdma') {
            $actual = Get-DcbndkMember -Object $rdma -Name $row['Property']
            $null = $results.Add((New-DcbndkCheck -Check "rdma.$($row['Property'])" -Expected $expected -Actual $actual))
        }
        else {
            $actual = Get-DcbndkMember -Object $info -Name $row['Property']
            $null = $results.Add((New-DcbndkCheck -Check "rdma.RdmaAdapterInfo.$($row['Property'])" -Expected $expected -Actual $actual))
        }
    }

    # Both structures speak of the per-QP read limits (issue 21: they once disagreed).
    foreach ($limit in @('MaxInboundReadLimit', 'MaxOutboundReadLimit')) {
        $top = Get-DcbndkMember -Object $rdma -Name $limit
        $inner = Get-DcbndkMember -Object $info -Name $limit
        $null = $results.Add((New-DcbndkCondition -Check "rdma.$limit agrees with RdmaAdapterInfo" `
                    -Holds ("$top" -eq "$inner" -and "$top" -notmatch '^<') -Expected 'the same value' -Actual "$top and $inner"))
    }

    # RdmaMissingCounterInfo: the driver reports every counter (NDIS_NDK_CAPABILITIES
    # MissingCounterMask 0), so no counter may be flagged missing.
    $missing = Get-DcbndkMember -Object $rdma -Name 'RdmaMissingCounterInfo'
    if ($missing -is [Microsoft.Management.Infrastructure.CimInstance]) {
        $flagged = @($missing.CimInstanceProperties | Where-Object { $_.Value -eq $true } | ForEach-Object { $_.Name })
        $null = $results.Add((New-DcbndkCondition -Check 'rdma.RdmaMissingCounterInfo' -Holds ($flagged.Count -eq 0) `
                    -Expected 'no counter flagged missing' -Actual "flagged: $($flagged -join ', ')"))
    }
    else {
        $null = $results.Add((New-DcbndkInfo -Check 'rdma.RdmaMissingCounterInfo' -Actual "not an object here, not compared: $missing"))
    }

    # RdmaTechnology: NDK_ADAPTER_INFO (NDKPI 1.2) carries it, from *NetworkDirectTechnology;
    # MSFT_NetAdapter_RdmaAdapterInfo's documented MOF has no such property, so it is compared
    # only where this Windows shows one. The keyword itself is compared always.
    $technology = Get-DcbndkKeywordValue -AdapterName $name -Keyword '*NetworkDirectTechnology' -Default 4 -Choices @(1, 4)
    $keyword = Get-DcbndkAdvancedProperty -AdapterName $name -Keyword '*NetworkDirectTechnology'
    $shown = '<no *NetworkDirectTechnology advanced property>'
    if ($null -ne $keyword) {
        $shown = "$(@($keyword.RegistryValue) -join ',') ($($keyword.DisplayValue))"
    }
    $wantText = @{ 1 = 'iWARP'; 4 = 'RoCEv2' }[[int]$technology]
    $null = $results.Add((New-DcbndkCheck -Check 'advanced.*NetworkDirectTechnology' -Expected "$technology ($wantText)" -Actual $shown))
    if (Test-DcbndkHasMember -Object $info -Name 'RdmaTechnology') {
        $seen = [string]$info.RdmaTechnology
        $holds = ($seen -eq [string]$technology -or $seen -eq $DcbndkRdmaTechnologies[[int]$technology] -or
            $seen -like "Ndk$($DcbndkRdmaTechnologies[[int]$technology])")
        $null = $results.Add((New-DcbndkCondition -Check 'rdma.RdmaAdapterInfo.RdmaTechnology' -Holds $holds `
                    -Expected "$technology ($($DcbndkRdmaTechnologies[[int]$technology]))" -Actual $seen))
    }
    else {
        $null = $results.Add((New-DcbndkInfo -Check 'rdma.RdmaAdapterInfo.RdmaTechnology' -Actual 'not shown by this Windows (not in the documented MOF)'))
    }

    # Get-NetAdapter and Get-NetAdapterRdma name the same adapter; Get-NetAdapterHardwareInfo
    # shows PCI and MSI properties, which a root-enumerated adapter may not have at all.
    $null = $results.Add((New-DcbndkCheck -Check 'rdma.InterfaceDescription' -Expected ([string]$Adapter.InterfaceDescription) `
                -Actual (Get-DcbndkMember -Object $rdma -Name 'InterfaceDescription')))
    $hardware = @(Get-NetAdapterHardwareInfo -Name $name -ErrorAction SilentlyContinue)
    if ($hardware.Count -gt 0) {
        foreach ($property in @('Name', 'InterfaceDescription')) {
            $null = $results.Add((New-DcbndkCheck -Check "hardware_info.$property agrees with Get-NetAdapterRdma" `
                        -Expected (Get-DcbndkMember -Object $rdma -Name $property) -Actual (Get-DcbndkMember -Object $hardware[0] -Name $property)))
        }
    }
    else {
        $null = $results.Add((New-DcbndkInfo -Check 'hardware_info' -Actual 'Get-NetAdapterHardwareInfo lists nothing for this root-enumerated adapter (no PCI location)'))
    }

    # The global NetworkDirect switch: SMB uses no RDMA adapter while it is off.
    $offload = Get-NetOffloadGlobalSetting
    $null = $results.Add((New-DcbndkCheck -Check 'offload.NetworkDirect' -Expected 'Enabled' -Actual ([string](Get-DcbndkMember -Object $offload -Name 'NetworkDirect'))))

    # The SMB client sees the interface as RDMA capable, with its address and link speed.
    $smb = @(Get-SmbClientNetworkInterface | Where-Object { [int]$_.InterfaceIndex -eq [int]$Adapter.InterfaceIndex })
    $smbInterface = $null
    if ($smb.Count -gt 0) {
        $smbInterface = $smb[0]
    }
    $null = $results.Add((New-DcbndkCheck -Check "smb_client[$($Adapter.InterfaceIndex)].RdmaCapable" -Expected $true -Actual (Get-DcbndkMember -Object $smbInterface -Name 'RdmaCapable')))
    $addresses = @(Get-DcbndkMember -Object $smbInterface -Name 'IpAddresses')
    $null = $results.Add((New-DcbndkCondition -Check "smb_client[$($Adapter.InterfaceIndex)].IpAddresses" -Holds ($addresses -contains $IPAddress) `
                -Expected "contains $IPAddress" -Actual ($addresses -join ', ')))
    $gbps = Get-DcbndkKeywordValue -AdapterName $name -Keyword 'SimLinkSpeed' -Default 100 -Choices @(10, 25, 40, 100)
    $null = $results.Add((New-DcbndkCheck -Check "smb_client[$($Adapter.InterfaceIndex)].LinkSpeed" -Expected ([uint64]$gbps * 1000000000) `
                -Actual (Get-DcbndkMember -Object $smbInterface -Name 'LinkSpeed')))

    # The RDMA statistics (OID_NDK_STATISTICS): present, with every counter a number.
    $statistics = Get-NetAdapterStatistics -Name $name -ErrorAction SilentlyContinue
    $counters = Get-DcbndkMember -Object $statistics -Name 'RdmaStatistics'
    $absent = @($DcbndkRdmaCounters | Where-Object {
            $value = Get-DcbndkMember -Object $counters -Name $_
            -not ($value -is [uint64] -or $value -is [int64] -or $value -is [uint32] -or $value -is [int32])
        })
    $null = $results.Add((New-DcbndkCondition -Check 'statistics.RdmaStatistics' -Holds ($absent.Count -eq 0) `
                -Expected "the $($DcbndkRdmaCounters.Count) counters of MSFT_NetAdapter_RdmaStatistics" -Actual "missing or not numbers: $($absent -join ', ')"))
    return , $results.ToArray()
}

try {
    $adapter = Invoke-DcbndkStep "Check prerequisites (elevation, the adapter of $HardwareId, *NetworkDirect = 1)" {
        Assert-DcbndkAdministrator
        $found = Get-DcbndkAdapter -HardwareId $HardwareId
        Assert-DcbndkNetworkDirect -Adapter $found
        $found
    }

    Invoke-DcbndkStep "Give '$($adapter.Name)' the address $IPAddress/$PrefixLength" {
        Set-DcbndkAdapterAddress -Adapter $adapter -IPAddress $IPAddress -PrefixLength $PrefixLength
    }

    Invoke-DcbndkStep "Show the RDMA views of '$($adapter.Name)'" {
        $rdma = Get-NetAdapterRdma -Name $adapter.Name
        $rdma | Format-List -Property * | Out-String -Width 4096 | Write-Host
        if (Test-DcbndkHasMember -Object $rdma -Name 'RdmaAdapterInfo') {
            $rdma.RdmaAdapterInfo | Format-List -Property * | Out-String -Width 4096 | Write-Host
        }
        Get-NetAdapterHardwareInfo -Name $adapter.Name -ErrorAction SilentlyContinue | Format-List -Property * | Out-String -Width 4096 | Write-Host
        Get-SmbClientNetworkInterface | Format-Table -AutoSize | Out-String -Width 4096 | Write-Host
        Get-NetOffloadGlobalSetting | Format-List | Out-String -Width 4096 | Write-Host
        $statistics = Get-NetAdapterStatistics -Name $adapter.Name
        if (Test-DcbndkHasMember -Object $statistics -Name 'RdmaStatistics') {
            $statistics.RdmaStatistics | Format-List | Out-String -Width 4096 | Write-Host
        }
    }

    $results = Invoke-DcbndkStep "Compare with the driver's values (up to $TimeoutSeconds s)" {
        $deadline = (Get-Date).AddSeconds($TimeoutSeconds)
        while ($true) {
            $current = Test-DcbndkRdmaExpectation -Adapter $adapter -IPAddress $IPAddress
            $failing = @($current | Where-Object { $false -eq $_.Passed })
            if ($failing.Count -eq 0 -or (Get-Date) -gt $deadline) {
                return , $current
            }
            Start-Sleep -Seconds 2
        }
    }

    $failed = Write-DcbndkReport -Results $results -ReportPath $ReportPath
    if ($failed -gt 0) {
        exit 1
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
