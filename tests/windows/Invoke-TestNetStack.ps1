#Requires -Version 5.1
<#
.SYNOPSIS
Runs Microsoft's Test-NetStack (PowerShell Gallery module) on the addresses of the two dcbndk
adapters of one VM: its prerequisites, its connectivity map, and its stages (1 ICMP
connectivity and PMTUD, 2 TCP stress, 3 RDMA connectivity, 4-6 RDMA stress), saving what it
returns; then checks that it tested the path between the two addresses and passed.

.DESCRIPTION
    .\Install-Dcbndk.ps1 -PackageDir <dir> -HardwareId root\dcbndk,root\dcbndk_b
    .\Invoke-TestNetStack.ps1 [-AddressA 198.18.21.1] [-AddressB 198.18.21.2] [-Stage 1,2,3,4,5,6]

The parameters used were read in Test-NetStack's own source (github.com/microsoft/Test-NetStack
at f840d72, published to the Gallery as 2024.5.1.189 with the same files): -IPTarget,
-Stage (1-6; 7 and 8 need -Experimental and are not offered here), -EnableFirewallRules,
-OnlyPrerequisites, -OnlyConnectivityMap, -ContinueOnFailure and -LogPath. Its help example
"-MachineList" is not a parameter of that version; -Nodes is, and is not used here (it wants
DNS names of cluster nodes). The script installs exactly that version when it is absent and
stops if the installed one lacks a parameter it uses.

What Test-NetStack can and cannot show on one VM (read in its helpers/internal.psm1 and
helpers/prerequisites.psm1, not run):
 - with -IPTarget it finds each address's node by reverse DNS (Resolve-DnsName -DnsOnly,
   Get-ConnectivityMapping); an address without a PTR record is left out of the map;
 - it treats every -IPTarget address as a remote machine for its prerequisites
   (Invoke-Command -ComputerName <address>), which needs WinRM and, for an IP address, the
   address in the WinRM client's TrustedHosts; this script changes neither;
 - it pairs only addresses of DIFFERENT nodes (Get-RunspaceGroups and every stage:
   Where-Object NodeName -ne $thisSource.NodeName). Both dcbndk addresses are on this machine
   (the adapters meet only on the driver's in-image virtual wire, so they cannot be on two
   VMs), so the stages find no pair to test, and Test-NetStack reports a stage with no pair as
   'Pass'. This script does not trust that summary: it checks that the path A -> B and B -> A
   was actually tested, and reports FAIL with this reason when it was not;
 - the RDMA stages run NdkPerfCmd.exe by name through Invoke-Command, and the module ships no
   copy of it; the script shows whether Windows has one on PATH.
Validate-DCB (the other Gallery tool) is not run: its checks require a physical adapter of a
known vendor (Tests/unit/modal.unit.tests.ps1: "Interface must be physical hardware", the
vendor list) and five modules (NetworkingDSC, xHyper-V, VMNetworkAdapter, DataCenterBridging,
Pester 4.9.0); its VLANID (M13) and *JumboPacket (M15) checks read keywords dcbndk offers.

Steps (the script stops at the first one that fails and says which):
 1. checks elevation, Windows build 20279 or later (Test-NetStack's own OS prerequisite),
    both adapters, *NetworkDirect = 1 on both and one SimVirtualWire;
 2. gives A and B their addresses (recorded; Uninstall-Dcbndk.ps1 removes them);
 3. installs Test-NetStack -TestNetStackVersion from the PowerShell Gallery when absent, and
    the NuGet package provider when absent (both recorded; Uninstall-Dcbndk.ps1 removes them);
 4. imports it and checks it has the parameters used;
 5. shows what Test-NetStack will depend on: reverse DNS of both addresses, the WinRM service,
    NdkPerfCmd.exe;
 6. with -EnableFirewallRules, records the firewall rules Test-NetStack may enable or create
    (Uninstall-Dcbndk.ps1 restores them);
 7. runs Test-NetStack -IPTarget A,B -OnlyPrerequisites, then -OnlyConnectivityMap, then
    -Stage ... -ContinueOnFailure, each with -LogPath into -ResultDir, and saves each result
    object there (Export-Clixml);
 8. prints PASS / FAIL per expectation and "N passed, M failed":
    - every prerequisite Test-NetStack checked is True for both addresses;
    - the connectivity map has both addresses, RDMA enabled, in one testable network;
    - per stage: the path A -> B and B -> A (stage 5: both as receiver; stage 6: the subnet)
      has a result, and every such result is 'Pass'.
The results folder is output, not machine state: Uninstall-Dcbndk.ps1 leaves it.
Exits 0 when every expectation holds, 1 otherwise. Not run on a VM by the project yet.

.PARAMETER AddressA
The address of root\dcbndk (default 198.18.21.1, from the benchmark range 198.18.0.0/15).

.PARAMETER AddressB
The address of root\dcbndk_b (default 198.18.21.2). Same subnet as A.

.PARAMETER PrefixLength
The prefix length of both addresses (default 24).

.PARAMETER Stage
The Test-NetStack stages to run (default 1-6, Test-NetStack's own default).

.PARAMETER EnableFirewallRules
Pass -EnableFirewallRules to Test-NetStack (it enables ICMP echo, WinRM and SMB Direct iWARP
rules and adds an NTttcp rule); the rules' state is recorded first and restored by
Uninstall-Dcbndk.ps1. Traffic between two addresses of this machine is loopback traffic, which
the Windows Firewall does not filter, so this should not be needed.

.PARAMETER TestNetStackVersion
The Test-NetStack version to use (default 2024.5.1.189, the one this script was written against).

.PARAMETER ResultDir
Where to save the logs and results (default .\dcbndk-testnetstack-<date>-<time>).

.PARAMETER ReportPath
Also write the PASS/FAIL results as JSON to this file.
#>
[CmdletBinding()]
param(
    [string] $AddressA = '198.18.21.1',
    [string] $AddressB = '198.18.21.2',
    [ValidateRange(1, 32)] [int] $PrefixLength = 24,
    [ValidateSet(1, 2, 3, 4, 5, 6)] [int[]] $Stage = @(1, 2, 3, 4, 5, 6),
    [switch] $EnableFirewallRules,
    [string] $TestNetStackVersion = '2024.5.1.189',
    [string] $ResultDir = (Join-Path (Get-Location) ('dcbndk-testnetstack-' + (Get-Date -Format 'yyyyMMdd-HHmmss'))),
    [string] $ReportPath = ''
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')
. (Join-Path $PSScriptRoot 'DcbndkRdmaCommon.ps1')

$Subnet = ''
$NotPaired = ('Test-NetStack pairs only addresses of different nodes (helpers/internal.psm1, ' +
    'Get-RunspaceGroups: Where-Object NodeName -ne ...), and both are on this machine')

# The result columns of each stage in Test-NetStack 2024.5.1.189 (Test-NetStack.psm1): who
# sent, who received, the status column; for stage 5 (N:1) the senders a receiver was tested
# from, for stage 6 (N:N) the receive rates. Stages 5 and 6 make a row even when no other node
# sends (their client lists are built with NodeName -ne), so a row alone proves nothing there.
$StageColumns = @{
    1 = @{ From = 'Source'; To = 'Destination'; Status = 'PathStatus' }
    2 = @{ From = 'Sender'; To = 'Receiver'; Status = 'PathStatus' }
    3 = @{ From = 'Sender'; To = 'Receiver'; Status = 'PathStatus' }
    4 = @{ From = 'Sender'; To = 'Receiver'; Status = 'PathStatus' }
    5 = @{ To = 'Receiver'; Status = 'ReceiverStatus'; Senders = 'ClientNetworkTested' }
    6 = @{ Network = 'Subnet'; Status = 'NetworkStatus'; Rates = 'RxGbps' }
}

function Invoke-DcbndkTestNetStackRun {
    <#
    Runs Test-NetStack with $Arguments (+ -IPTarget A,B and -LogPath), saves its result object as
    <Name>.clixml and its log as <Name>.txt in $ResultDir, and returns the result object.
    Test-NetStack writes errors and may 'break' out of its function: it runs with
    ErrorAction Continue (its errors are kept and shown), inside a loop of one pass that a
    stray 'break' ends instead of this script. It also throws when its prerequisites fail (no
    WinRM trust for an address, an old build): a throw is a terminating error, which
    -ErrorAction does not stop, so it is caught here and shown with the other errors; the run
    then has no result object, and the checks report FAIL with the reason instead of the
    script stopping before its next runs and its report.
    #>
    param([Parameter(Mandatory)] [string] $Name, [hashtable] $Arguments = @{})
    $Arguments['IPTarget'] = @($AddressA, $AddressB)
    $Arguments['LogPath'] = Join-Path $ResultDir "$Name.txt"
    $output = @()
    $netStackErrors = $null
    $thrown = $null
    $previous = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        do {
            $output = @(Test-NetStack @Arguments -ErrorAction Continue -ErrorVariable netStackErrors)
        } while ($false)
    }
    catch {
        $thrown = $_
    }
    finally {
        $ErrorActionPreference = $previous
    }
    if ($null -ne $thrown) {
        Write-Host "    Test-NetStack stopped: $($thrown.Exception.Message)" -ForegroundColor Yellow
    }
    # Its result object is the one with Prerequisites; anything else it wrote is left aside.
    $result = @($output | Where-Object { Test-DcbndkHasMember -Object $_ -Name 'Prerequisites' }) | Select-Object -Last 1
    foreach ($record in @($netStackErrors)) {
        if ($null -ne $record) {
            Write-Host "    Test-NetStack error: $record" -ForegroundColor Yellow
        }
    }
    if ($null -ne $result) {
        $result | Export-Clixml -LiteralPath (Join-Path $ResultDir "$Name.clixml") -Depth 6
        $result | Format-List | Out-String -Width 4096 | Write-Host
    }
    Write-Host "    Saved to $ResultDir\$Name.*"
    return $result
}

function Get-DcbndkMappedRow {
    <# The rows of a result's connectivity map (TestableNetworks groups), or none. #>
    param($Result)
    $networks = Get-DcbndkMember -Object $Result -Name 'TestableNetworks'
    return , @(@($networks) | Where-Object { -not ($_ -is [string]) -and (Test-DcbndkHasMember -Object $_ -Name 'Group') } |
            ForEach-Object { @($_.Group) })
}

function Test-DcbndkPrerequisite {
    <# Every prerequisite column (WinRM, OSVersion, ICMP, Module, ...) True for both addresses. #>
    param($Result)
    $results = @()
    $rows = @(Get-DcbndkMember -Object $Result -Name 'Prerequisites')
    foreach ($address in @($AddressA, $AddressB)) {
        $row = @($rows | Where-Object { (Test-DcbndkHasMember -Object $_ -Name 'Name') -and [string]$_.Name -eq $address })
        if ($row.Count -eq 0) {
            $results += New-DcbndkCondition -Check "Test-NetStack prerequisites of $address" -Holds $false -Expected 'a row' -Actual '<none>'
            continue
        }
        $columns = @($row[0].PSObject.Properties | Where-Object { $_.Name -ne 'Name' -and $_.Name -ne 'Version' })
        $notTrue = @($columns | Where-Object { $_.Value -ne $true })
        $why = ''
        if (@($columns | Where-Object { $_.Name -eq 'WinRM' -and $_.Value -ne $true }).Count -gt 0) {
            $why = 'Test-NetStack reaches every -IPTarget address with Invoke-Command -ComputerName <address>: WinRM must accept this address (TrustedHosts)'
        }
        $results += New-DcbndkCondition -Check "Test-NetStack prerequisites of $address" -Holds ($columns.Count -gt 0 -and $notTrue.Count -eq 0) `
            -Expected 'every column True' -Actual (@($columns | ForEach-Object { "$($_.Name) = $($_.Value)" }) -join ', ') -Why $why
    }
    return , $results
}

function Test-DcbndkConnectivityMap {
    <# Both addresses in the map, RDMA enabled, in one testable network. #>
    param($Result)
    if (-not (Test-DcbndkHasMember -Object $Result -Name 'TestableNetworks')) {
        return , @(New-DcbndkCondition -Check 'Test-NetStack connectivity map' -Holds $false -Expected 'a map' -Actual '<no TestableNetworks in its result>' `
                -Why 'Test-NetStack makes the map only after its prerequisites pass')
    }
    $rows = Get-DcbndkMappedRow -Result $Result
    $results = @()
    foreach ($address in @($AddressA, $AddressB)) {
        $row = @($rows | Where-Object { [string](Get-DcbndkMember -Object $_ -Name 'IPAddress') -eq $address })
        $actual = '<not in the map>'
        $holds = $false
        if ($row.Count -gt 0) {
            $actual = "node $(Get-DcbndkMember -Object $row[0] -Name 'NodeName'), subnet $(Get-DcbndkMember -Object $row[0] -Name 'Subnet'), RDMAEnabled $(Get-DcbndkMember -Object $row[0] -Name 'RDMAEnabled')"
            $holds = ((Get-DcbndkMember -Object $row[0] -Name 'RDMAEnabled') -eq $true -and [string](Get-DcbndkMember -Object $row[0] -Name 'Subnet') -eq $Subnet)
        }
        $results += New-DcbndkCondition -Check "Test-NetStack connectivity map: $address" -Holds $holds `
            -Expected "in a testable network $Subnet with RDMAEnabled True" -Actual $actual `
            -Why 'an address without a reverse DNS (PTR) record is left out of the map (Get-ConnectivityMapping: Resolve-DnsName -DnsOnly)'
    }
    return , $results
}

function Test-DcbndkStage {
    <# For stage $Number: the paths between A and B have results, all 'Pass', with traffic seen. #>
    param($Result, [int] $Number)
    $columns = $StageColumns[$Number]
    $results = @()
    if (-not (Test-DcbndkHasMember -Object $Result -Name "Stage$Number")) {
        $why = 'see the errors above and the log in -ResultDir'
        if (-not (Test-DcbndkHasMember -Object $Result -Name 'TestableNetworks')) {
            $why = 'Test-NetStack stopped before its stages: its prerequisites failed or it found no testable network'
        }
        return , @(New-DcbndkCondition -Check "Test-NetStack stage $Number" -Holds $false -Expected 'results' -Actual "<no Stage$Number in its result>" -Why $why)
    }
    $value = $Result."Stage$Number"
    $rows = @(@($value) | Where-Object { -not ($_ -is [string]) })
    $paths = @()
    if ($columns.ContainsKey('From')) {
        $paths = @(
            @{ Label = "$AddressA -> $AddressB"; From = $AddressA; To = $AddressB; Other = $AddressA },
            @{ Label = "$AddressB -> $AddressA"; From = $AddressB; To = $AddressA; Other = $AddressB })
    }
    elseif ($columns.ContainsKey('To')) {
        $paths = @(
            @{ Label = "N -> $AddressA"; To = $AddressA; Other = $AddressB },
            @{ Label = "N -> $AddressB"; To = $AddressB; Other = $AddressA })
    }
    else {
        $paths = @(@{ Label = "N <-> N on $Subnet"; Network = $Subnet })
    }
    foreach ($path in $paths) {
        $matching = @($rows | Where-Object {
                $row = $_
                $ok = $true
                foreach ($key in @('From', 'To', 'Network')) {
                    if ($path.ContainsKey($key)) {
                        $ok = $ok -and [string](Get-DcbndkMember -Object $row -Name $columns[$key]) -eq $path[$key]
                    }
                }
                $ok
            })
        $statuses = @($matching | ForEach-Object { [string](Get-DcbndkMember -Object $_ -Name $columns['Status']) })
        $holds = ($matching.Count -gt 0 -and @($statuses | Where-Object { $_ -ne 'Pass' }).Count -eq 0)
        $actual = $statuses -join ', '
        $why = ''
        if ($matching.Count -eq 0) {
            if ($value -is [string]) {
                $actual = "Stage$Number = $value"
            }
            else {
                $actual = "no result for this path ($($rows.Count) rows)"
            }
            $why = $NotPaired
        }
        elseif ($columns.ContainsKey('Senders')) {
            $senders = @($matching | ForEach-Object { @(Get-DcbndkMember -Object $_ -Name $columns['Senders']) } | ForEach-Object { [string]$_ })
            if ($senders -notcontains $path['Other']) {
                $holds = $false
                $actual += " (tested from: $($senders -join ', '))"
                $why = $NotPaired
            }
        }
        elseif ($columns.ContainsKey('Rates')) {
            $rates = @($matching | ForEach-Object { @(Get-DcbndkMember -Object $_ -Name $columns['Rates']) })
            $numbers = @($rates | Where-Object { $_ -is [double] -or $_ -is [decimal] -or $_ -is [int] -or $_ -is [int64] })
            if ($numbers.Count -eq 0 -or @($numbers | Where-Object { $_ -le 0 }).Count -gt 0) {
                $holds = $false
                $actual += " (RxGbps: $($rates -join ', '))"
                $why = $NotPaired
            }
        }
        $results += New-DcbndkCondition -Check "Test-NetStack stage $Number, $($path['Label'])" -Holds $holds `
            -Expected 'tested, Pass' -Actual $actual -Why $why
    }
    return , $results
}

try {
    $adapters = Invoke-DcbndkStep 'Check prerequisites (elevation, Windows build, both adapters, *NetworkDirect = 1, one SimVirtualWire)' {
        Assert-DcbndkAdministrator
        $build = [System.Environment]::OSVersion.Version.Build
        if ($build -lt 20279) {
            throw "Windows build ${build}: Test-NetStack requires build 20279 or later (Windows Server 2022, Azure Stack HCI 21H2; its prerequisites.psm1)"
        }
        $a = Get-DcbndkAdapter -HardwareId 'root\dcbndk'
        $b = Get-DcbndkAdapter -HardwareId 'root\dcbndk_b'
        Assert-DcbndkNetworkDirect -Adapter $a
        Assert-DcbndkNetworkDirect -Adapter $b
        if ((Get-DcbndkVirtualWire -Adapter $a) -ne (Get-DcbndkVirtualWire -Adapter $b)) {
            throw "'$($a.Name)' and '$($b.Name)' are on different SimVirtualWire numbers: they cannot hear each other"
        }
        if ((Get-DcbndkSubnet -IPAddress $AddressA -PrefixLength $PrefixLength) -ne (Get-DcbndkSubnet -IPAddress $AddressB -PrefixLength $PrefixLength)) {
            throw "$AddressA and $AddressB are not in one /$PrefixLength subnet"
        }
        [pscustomobject]@{ A = $a; B = $b }
    }
    $Subnet = Get-DcbndkSubnet -IPAddress $AddressA -PrefixLength $PrefixLength

    Invoke-DcbndkStep "Give the adapters their addresses ($AddressA, $AddressB)" {
        Set-DcbndkAdapterAddress -Adapter $adapters.A -IPAddress $AddressA -PrefixLength $PrefixLength
        Set-DcbndkAdapterAddress -Adapter $adapters.B -IPAddress $AddressB -PrefixLength $PrefixLength
    }

    Invoke-DcbndkStep "Install Test-NetStack $TestNetStackVersion when absent" {
        Install-DcbndkGalleryModule -Name 'Test-NetStack' -Version $TestNetStackVersion
    }

    Invoke-DcbndkStep 'Import Test-NetStack and check its parameters' {
        Import-Module -Name 'Test-NetStack' -RequiredVersion $TestNetStackVersion -Force
        $parameters = @((Get-Command -Name 'Test-NetStack').Parameters.Keys)
        $needed = @('IPTarget', 'Stage', 'LogPath', 'OnlyPrerequisites', 'OnlyConnectivityMap', 'ContinueOnFailure')
        if ($EnableFirewallRules) {
            $needed += 'EnableFirewallRules'
        }
        $missing = @($needed | Where-Object { $parameters -notcontains $_ })
        if ($missing.Count -gt 0) {
            throw "this Test-NetStack has no parameter $($missing -join ', ') (written against 2024.5.1.189)"
        }
        if (-not (Test-Path -LiteralPath $ResultDir)) {
            $null = New-Item -ItemType Directory -Path $ResultDir
        }
    }

    Invoke-DcbndkStep 'Show what Test-NetStack depends on (reverse DNS, WinRM, NdkPerfCmd.exe)' {
        foreach ($address in @($AddressA, $AddressB)) {
            $ptr = Resolve-DnsName -Name $address -DnsOnly -ErrorAction SilentlyContinue |
                Where-Object { Test-DcbndkHasMember -Object $_ -Name 'NameHost' } | Select-Object -First 1
            if ($null -eq $ptr) {
                Write-Host "    $address has no reverse DNS name: Test-NetStack leaves it out of its map" -ForegroundColor Yellow
            }
            else {
                Write-Host "    $address -> $($ptr.NameHost)"
            }
        }
        $winrm = Get-Service -Name 'WinRM' -ErrorAction SilentlyContinue
        Write-Host "    WinRM service: $(if ($null -eq $winrm) { 'absent' } else { $winrm.Status })"
        $ndkperf = Get-Command -Name 'NdkPerfCmd.exe' -CommandType Application -ErrorAction SilentlyContinue
        Write-Host "    NdkPerfCmd.exe: $(if ($null -eq $ndkperf) { 'not on PATH (stages 3-6 cannot run)' } else { @($ndkperf)[0].Source })"
    }

    if ($EnableFirewallRules) {
        Invoke-DcbndkStep 'Record the firewall rules Test-NetStack may change' {
            Save-DcbndkFirewallRule
        }
    }

    $prerequisites = Invoke-DcbndkStep 'Test-NetStack -OnlyPrerequisites' {
        $arguments = @{ OnlyPrerequisites = $true; Stage = $Stage }
        Invoke-DcbndkTestNetStackRun -Name 'prerequisites' -Arguments $arguments
    }

    $map = Invoke-DcbndkStep 'Test-NetStack -OnlyConnectivityMap' {
        Invoke-DcbndkTestNetStackRun -Name 'connectivity-map' -Arguments @{ OnlyConnectivityMap = $true }
    }

    $stages = Invoke-DcbndkStep "Test-NetStack -Stage $($Stage -join ',') -ContinueOnFailure" {
        $arguments = @{ Stage = $Stage; ContinueOnFailure = $true }
        if ($EnableFirewallRules) {
            $arguments['EnableFirewallRules'] = $true
        }
        Invoke-DcbndkTestNetStackRun -Name 'stages' -Arguments $arguments
    }

    $results = @()
    $results += Test-DcbndkPrerequisite -Result $prerequisites
    $results += Test-DcbndkConnectivityMap -Result $map
    foreach ($number in @($Stage | Sort-Object)) {
        $results += Test-DcbndkStage -Result $stages -Number $number
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
