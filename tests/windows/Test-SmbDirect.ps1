#Requires -Version 5.1
<#
.SYNOPSIS
SMB Direct (SMB 3 over NDK) between the two dcbndk adapters of ONE VM: a share on the address of
root\dcbndk, mapped through the address of root\dcbndk_b, a file copied both ways, and checks
that SMB used RDMA and that the adapters' RDMA counters moved.

.DESCRIPTION
    .\Install-Dcbndk.ps1 -PackageDir <dir> -HardwareId root\dcbndk,root\dcbndk_b
    .\Test-SmbDirect.ps1 [-AddressA 198.18.21.1] [-AddressB 198.18.21.2] [-PrefixLength 24]

Why one VM: the dcbndk adapters reach each other only through the driver's virtual wire, a hub
inside the driver image (driver/src/resources/wire.rs: a static table of ports in dcbndk.sys),
so only adapters of one Windows instance with the same SimVirtualWire number hear each other.
Two VMs have two kernels and two hubs; nothing joins them. SMB Direct therefore runs between
the two adapters of one machine: the SMB server on adapter A's address, the SMB client on
adapter B's.

Loopback, and how the script steers SMB onto RDMA: SMB to an address of the machine itself is
a connection to itself. Its TCP connection never reaches an adapter (TCP/IP loops a packet for
a local address back inside the stack), so the TCP side proves nothing about dcbndk. The RDMA
side is different: SMB multichannel asks the server for its interfaces and, where both ends are
RDMA capable, opens SMB Direct connections with NDK from a client interface to a server
interface; NDK hands the connect to the provider of the client interface, dcbndk B, whose
frames cross the virtual wire to dcbndk A. The script
 - names the server by adapter A's address (\\198.18.21.1\share), never by the computer name or
   localhost, so that the server interfaces SMB finds include A's;
 - adds an SMB multichannel constraint (New-SmbMultichannelConstraint) for that server name to
   adapter B's interface, so that the client opens its channels on B only;
 - touches the share once and waits for the RDMA channels before it copies anything, so that
   the copy runs over them if they come up at all.
Whether the SMB client sets up multichannel (and so RDMA) at all for a server that is the
machine itself is not documented; Microsoft documents SMB Direct for two computers. If it does
not, or the provider cannot connect, SMB falls back to TCP silently: there is no setting that
forbids the fallback. The script then reports FAIL on the RDMA expectations, with what it saw
(Get-SmbMultichannelConnection, netstat -xan, the counters), instead of passing on a TCP copy.

Steps (the script stops at the first one that fails and says which):
 1. checks elevation, both adapters, *NetworkDirect = 1 on both and one SimVirtualWire;
 2. removes the SMB mapping, constraint and share of an earlier run of this script, if any;
 3. gives A and B their addresses (one subnet; recorded, Uninstall-Dcbndk.ps1 removes them);
 4. shows Get-NetAdapterRdma, Get-SmbServerNetworkInterface, Get-SmbClientNetworkInterface;
 5. creates the share folder and the share on A (recorded);
 6. adds the multichannel constraint server A -> interface B (recorded);
 7. writes a test file of -FileSizeMB MiB under %ProgramData%\dcbndk;
 8. reads the RDMA counters (Get-NetAdapterStatistics RdmaStatistics of both adapters, and the
    performance counters "RDMA Activity" or "NetworkDirect Activity" where Windows has them);
 9. New-SmbMapping -RemotePath \\A\share (recorded), lists the share and waits up to
    -TimeoutSeconds for an RDMA channel in Get-SmbMultichannelConnection;
10. copies the file to the share and back, and compares the hashes;
11. shows Get-SmbConnection, Get-SmbMultichannelConnection, netstat -xan and the counters,
    then prints PASS / FAIL per expectation and "N passed, M failed":
    - the file came back unchanged;
    - Get-SmbConnection to A: Dialect 3.x (SMB Direct needs SMB 3);
    - Get-SmbMultichannelConnection: a channel from B's address to A's address with
      ClientRdmaCapable and ServerRdmaCapable True;
    - RdmaStatistics: InboundBytes and OutboundBytes grew on A and on B; when no SMB connection
      to A existed before the mapping, InitiatedConnections grew on B and AcceptedConnections
      on A;
    - the performance counters' inbound bytes grew, where the counter set exists.

The mapping, constraint and share stay until the next run of this script or
Uninstall-Dcbndk.ps1, so that they can be looked at. Exits 0 when every expectation holds, 1
otherwise. Not run on a VM by the project yet.

.PARAMETER AddressA
The address of root\dcbndk, where the SMB share is (default 198.18.21.1; 198.18.0.0/15 is the
range set aside for network benchmark tests, RFC 2544).

.PARAMETER AddressB
The address of root\dcbndk_b, the SMB client's side (default 198.18.21.2). Same subnet as A.

.PARAMETER PrefixLength
The prefix length of both addresses (default 24).

.PARAMETER ShareName
The SMB share to create (default dcbndk-smbdirect). It must not exist unless this script made it.

.PARAMETER SharePath
The folder to share (default %SystemDrive%\dcbndk-smbdirect). It must not exist unless this
script made it; it is deleted with the share.

.PARAMETER FileSizeMB
The size of the test file in MiB (default 64).

.PARAMETER TimeoutSeconds
How long to wait for SMB multichannel to open an RDMA channel (default 30).

.PARAMETER ReportPath
Also write the results as JSON to this file.
#>
[CmdletBinding()]
param(
    [string] $AddressA = '198.18.21.1',
    [string] $AddressB = '198.18.21.2',
    [ValidateRange(1, 32)] [int] $PrefixLength = 24,
    [ValidatePattern('^[A-Za-z0-9_-]{1,64}$')] [string] $ShareName = 'dcbndk-smbdirect',
    [string] $SharePath = (Join-Path $env:SystemDrive 'dcbndk-smbdirect'),
    [ValidateRange(1, 4096)] [int] $FileSizeMB = 64,
    [ValidateRange(0, 600)] [int] $TimeoutSeconds = 30,
    [string] $ReportPath = ''
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')
. (Join-Path $PSScriptRoot 'DcbndkRdmaCommon.ps1')

$RemotePath = "\\$AddressA\$ShareName"
$FileName = 'dcbndk-smbdirect.bin'
$WorkDir = Join-Path $script:DcbndkStateDir 'smbdirect'

function Get-DcbndkRdmaCounter {
    <# The RdmaStatistics counters of the adapter named $Name that the checks compare, as a hashtable. #>
    param([string] $Name)
    $counters = @{}
    $statistics = Get-NetAdapterStatistics -Name $Name -ErrorAction SilentlyContinue
    $rdma = Get-DcbndkMember -Object $statistics -Name 'RdmaStatistics'
    foreach ($counter in @('InboundBytes', 'OutboundBytes', 'InitiatedConnections', 'AcceptedConnections', 'ActiveConnections')) {
        $value = Get-DcbndkMember -Object $rdma -Name $counter
        if ($value -is [string]) {
            $counters[$counter] = $null
        }
        else {
            $counters[$counter] = [uint64]$value
        }
    }
    return $counters
}

function Get-DcbndkPerfCounterPath {
    <#
    The paths of the RDMA inbound-bytes counters, from whichever of the counter sets Windows has:
    'RDMA Activity' (perfmon on current Windows Server) or 'NetworkDirect Activity' (the name
    the OID_NDK_STATISTICS page gives). Empty when neither exists. English counter names: on a
    localized Windows the sets have other names and this finds none.
    #>
    foreach ($set in @('RDMA Activity', 'NetworkDirect Activity')) {
        $listed = Get-Counter -ListSet $set -ErrorAction SilentlyContinue
        if ($null -ne $listed) {
            $paths = @(@($listed)[0].Paths | Where-Object { $_ -like '*Inbound Bytes/sec' })
            if ($paths.Count -gt 0) {
                return , $paths
            }
        }
    }
    return , @()
}

function Get-DcbndkPerfCounterRaw {
    <#
    Sum of the raw values of the counters $Paths over the instances naming a dcbndk adapter. A
    bytes/sec counter's raw value is the running total of bytes (PERF_COUNTER_BULK_COUNT), so two
    raw readings compare like the RdmaStatistics. Returns the sum and the instances read.
    #>
    param([string[]] $Paths)
    $total = [uint64]0
    $instances = @()
    foreach ($path in $Paths) {
        $samples = (Get-Counter -Counter $path -MaxSamples 1 -ErrorAction SilentlyContinue)
        if ($null -eq $samples) {
            continue
        }
        foreach ($sample in @($samples.CounterSamples)) {
            if ([string]$sample.InstanceName -like '*dcbndk*') {
                $total += [uint64]$sample.RawValue
                $instances += [string]$sample.InstanceName
            }
        }
    }
    return [pscustomobject]@{ Total = $total; Instances = $instances }
}

function Test-DcbndkGrew {
    <# A check that counter $Counter of $Before/$After (Get-DcbndkRdmaCounter) grew. #>
    param([string] $Check, [hashtable] $Before, [hashtable] $After, [string] $Counter, [string] $Why)
    $was = $Before[$Counter]
    $now = $After[$Counter]
    if ($null -eq $was -or $null -eq $now) {
        return (New-DcbndkCondition -Check $Check -Holds $false -Expected 'a counter that grew' -Actual '<no RdmaStatistics>' -Why $Why)
    }
    return (New-DcbndkCondition -Check $Check -Holds ($now -gt $was) -Expected "more than $was" -Actual "$now" -Why $Why)
}

function Get-DcbndkRdmaChannel {
    <# The multichannel connections to server A from B's address with RDMA on both ends. #>
    return , @(Get-SmbMultichannelConnection -ServerName $AddressA -ErrorAction SilentlyContinue | Where-Object {
            [string]$_.ClientIpAddress -eq $AddressB -and [string]$_.ServerIpAddress -eq $AddressA -and
            $_.ClientRdmaCapable -and $_.ServerRdmaCapable
        })
}

try {
    $adapters = Invoke-DcbndkStep 'Check prerequisites (elevation, both adapters, *NetworkDirect = 1, one SimVirtualWire)' {
        Assert-DcbndkAdministrator
        $a = Get-DcbndkAdapter -HardwareId 'root\dcbndk'
        $b = Get-DcbndkAdapter -HardwareId 'root\dcbndk_b'
        Assert-DcbndkNetworkDirect -Adapter $a
        Assert-DcbndkNetworkDirect -Adapter $b
        $wireA = Get-DcbndkVirtualWire -Adapter $a
        $wireB = Get-DcbndkVirtualWire -Adapter $b
        if ($wireA -ne $wireB) {
            throw "'$($a.Name)' is on SimVirtualWire $wireA and '$($b.Name)' on ${wireB}: they cannot hear each other"
        }
        if ((Get-DcbndkSubnet -IPAddress $AddressA -PrefixLength $PrefixLength) -ne (Get-DcbndkSubnet -IPAddress $AddressB -PrefixLength $PrefixLength)) {
            throw "$AddressA and $AddressB are not in one /$PrefixLength subnet"
        }
        [pscustomobject]@{ A = $a; B = $b }
    }
    $adapterA = $adapters.A
    $adapterB = $adapters.B

    Invoke-DcbndkStep 'Remove the SMB mapping, constraint and share of an earlier run' {
        Undo-DcbndkSmb
    }

    Invoke-DcbndkStep "Give the adapters their addresses ($AddressA, $AddressB)" {
        Set-DcbndkAdapterAddress -Adapter $adapterA -IPAddress $AddressA -PrefixLength $PrefixLength
        Set-DcbndkAdapterAddress -Adapter $adapterB -IPAddress $AddressB -PrefixLength $PrefixLength
    }

    Invoke-DcbndkStep 'Show the adapters as RDMA and SMB see them' {
        Get-NetAdapterRdma -Name $adapterA.Name, $adapterB.Name | Format-Table -AutoSize | Out-String -Width 4096 | Write-Host
        Get-NetOffloadGlobalSetting | Format-List -Property NetworkDirect* | Out-String -Width 4096 | Write-Host
        Get-SmbServerConfiguration | Format-List -Property EnableMultiChannel | Out-String -Width 4096 | Write-Host
        Get-SmbClientConfiguration | Format-List -Property EnableMultiChannel | Out-String -Width 4096 | Write-Host
        Get-SmbServerNetworkInterface | Format-Table -AutoSize | Out-String -Width 4096 | Write-Host
        Get-SmbClientNetworkInterface | Format-Table -AutoSize | Out-String -Width 4096 | Write-Host
    }

    Invoke-DcbndkStep "Share $SharePath as '$ShareName'" {
        if (Get-SmbShare -Name $ShareName -ErrorAction SilentlyContinue) {
            throw "a share '$ShareName' exists and this script did not create it: give another -ShareName"
        }
        if (Test-Path -LiteralPath $SharePath) {
            throw "$SharePath exists and this script did not create it: give another -SharePath"
        }
        Add-DcbndkStateItem -Name 'smb_shares' -Item ([pscustomobject]@{ Name = $ShareName; Path = $SharePath; CreatedFolder = $true })
        $null = New-Item -ItemType Directory -Path $SharePath
        $user = [Security.Principal.WindowsIdentity]::GetCurrent().Name
        $null = New-SmbShare -Name $ShareName -Path $SharePath -FullAccess $user -Description 'dcbndk Test-SmbDirect.ps1'
        Write-Host "    \\$AddressA\$ShareName -> $SharePath (full access: $user)"
    }

    Invoke-DcbndkStep "Constrain SMB to $AddressA to the interface of '$($adapterB.Name)' (New-SmbMultichannelConstraint)" {
        $existing = @(Get-SmbMultichannelConstraint -ServerName $AddressA -ErrorAction SilentlyContinue)
        if ($existing.Count -gt 0) {
            throw "SMB multichannel constraints for $AddressA exist and this script did not add them"
        }
        Add-DcbndkStateItem -Name 'smb_constraints' -Item ([pscustomobject]@{ ServerName = $AddressA; InterfaceIndex = [int]$adapterB.InterfaceIndex })
        $null = New-SmbMultichannelConstraint -ServerName $AddressA -InterfaceIndex ([uint32]$adapterB.InterfaceIndex) -Force
        Get-SmbMultichannelConstraint -ServerName $AddressA | Format-Table -AutoSize | Out-String | Write-Host
    }

    $source = Invoke-DcbndkStep "Write a $FileSizeMB MiB test file" {
        if (-not (Test-Path -LiteralPath $WorkDir)) {
            $null = New-Item -ItemType Directory -Path $WorkDir
        }
        $path = Join-Path $WorkDir 'source.bin'
        $random = New-Object System.Random -ArgumentList 20210
        $chunk = New-Object byte[] (1024 * 1024)
        $stream = [System.IO.File]::Create($path)
        try {
            for ($i = 0; $i -lt $FileSizeMB; $i++) {
                $random.NextBytes($chunk)
                $stream.Write($chunk, 0, $chunk.Length)
            }
        }
        finally {
            $stream.Dispose()
        }
        $path
    }

    $before = Invoke-DcbndkStep 'Read the RDMA counters before' {
        $perfPaths = Get-DcbndkPerfCounterPath
        $perf = $null
        if ($perfPaths.Count -gt 0) {
            $perf = Get-DcbndkPerfCounterRaw -Paths $perfPaths
        }
        [pscustomobject]@{
            A             = Get-DcbndkRdmaCounter -Name $adapterA.Name
            B             = Get-DcbndkRdmaCounter -Name $adapterB.Name
            PerfPaths     = $perfPaths
            Perf          = $perf
            HadConnection = (@(Get-SmbConnection -ServerName $AddressA -ErrorAction SilentlyContinue).Count -gt 0)
        }
    }

    Invoke-DcbndkStep "Map $RemotePath (New-SmbMapping) and wait up to $TimeoutSeconds s for an RDMA channel" {
        Add-DcbndkStateItem -Name 'smb_mappings' -Item $RemotePath
        New-SmbMapping -RemotePath $RemotePath | Format-Table -AutoSize | Out-String | Write-Host
        # The first I/O makes the client ask the server for its interfaces; multichannel then
        # opens its channels in the background.
        $null = Get-ChildItem -LiteralPath $RemotePath
        $deadline = (Get-Date).AddSeconds($TimeoutSeconds)
        # (...), not @(...): the function returns its array whole (return , @(...)), and @()
        # would wrap it into one element, so that the count would always be 1.
        while ((Get-DcbndkRdmaChannel).Count -eq 0 -and (Get-Date) -lt $deadline) {
            Start-Sleep -Seconds 2
        }
    }

    $copy = Invoke-DcbndkStep 'Copy the file to the share and back' {
        $remote = Join-Path $RemotePath $FileName
        $back = Join-Path $WorkDir 'back.bin'
        $watch = [System.Diagnostics.Stopwatch]::StartNew()
        Copy-Item -LiteralPath $source -Destination $remote -Force
        $written = $watch.Elapsed.TotalSeconds
        $watch.Restart()
        Copy-Item -LiteralPath $remote -Destination $back -Force
        $read = $watch.Elapsed.TotalSeconds
        Write-Host ("    written in {0:N2} s, read back in {1:N2} s ({2} MiB)" -f $written, $read, $FileSizeMB)
        [pscustomobject]@{
            SourceHash = (Get-FileHash -LiteralPath $source -Algorithm SHA256).Hash
            BackHash   = (Get-FileHash -LiteralPath $back -Algorithm SHA256).Hash
        }
    }

    $after = Invoke-DcbndkStep 'Show the SMB connection, its channels and the counters after' {
        Get-SmbConnection -ServerName $AddressA -ErrorAction SilentlyContinue | Format-List | Out-String -Width 4096 | Write-Host
        Get-SmbMultichannelConnection -ServerName $AddressA -ErrorAction SilentlyContinue | Format-List | Out-String -Width 4096 | Write-Host
        # netstat -x lists NetworkDirect connections and listeners: an SMB Direct listener on
        # A's port 445 is the server side of RDMA being ready.
        $netstat = Invoke-DcbndkNative -FilePath 'netstat.exe' -ArgumentList @('-xan')
        Write-Host $netstat.Output
        $perf = $null
        if ($before.PerfPaths.Count -gt 0) {
            $perf = Get-DcbndkPerfCounterRaw -Paths $before.PerfPaths
        }
        [pscustomobject]@{
            A    = Get-DcbndkRdmaCounter -Name $adapterA.Name
            B    = Get-DcbndkRdmaCounter -Name $adapterB.Name
            Perf = $perf
        }
    }

    $results = New-Object System.Collections.ArrayList
    $noRdma = ('no RDMA traffic: SMB used TCP (loopback) only; see tests/windows/README.md, ' +
        '"SMB Direct on one VM", for the causes')
    $null = $results.Add((New-DcbndkCheck -Check 'copy: the file came back unchanged (SHA256)' -Expected $copy.SourceHash -Actual $copy.BackHash))

    $connection = @(Get-SmbConnection -ServerName $AddressA -ErrorAction SilentlyContinue)
    $dialects = @($connection | ForEach-Object { [string]$_.Dialect })
    $null = $results.Add((New-DcbndkCondition -Check "Get-SmbConnection $AddressA .Dialect" `
                -Holds ($dialects.Count -gt 0 -and @($dialects | Where-Object { $_ -notlike '3.*' }).Count -eq 0) `
                -Expected '3.x (SMB Direct needs SMB 3)' -Actual ($dialects -join ', ')))

    $channels = @(Get-SmbMultichannelConnection -ServerName $AddressA -ErrorAction SilentlyContinue | ForEach-Object {
            "$($_.ClientIpAddress)->$($_.ServerIpAddress) client RDMA $($_.ClientRdmaCapable) server RDMA $($_.ServerRdmaCapable)"
        })
    $null = $results.Add((New-DcbndkCondition -Check 'Get-SmbMultichannelConnection: RDMA channel B -> A' -Holds ((Get-DcbndkRdmaChannel).Count -gt 0) `
                -Expected "$AddressB->$AddressA with ClientRdmaCapable and ServerRdmaCapable True" -Actual ($channels -join '; ') -Why $noRdma))

    foreach ($side in @('A', 'B')) {
        foreach ($counter in @('InboundBytes', 'OutboundBytes')) {
            $null = $results.Add((Test-DcbndkGrew -Check "RdmaStatistics $side ($(if ($side -eq 'A') { $adapterA.Name } else { $adapterB.Name })).$counter grew" `
                        -Before ($before.$side) -After ($after.$side) -Counter $counter -Why $noRdma))
        }
    }
    if ($before.HadConnection) {
        $null = $results.Add((New-DcbndkInfo -Check 'RdmaStatistics connections' -Actual "an SMB connection to $AddressA existed before the mapping: the connection counters are not compared"))
    }
    else {
        $null = $results.Add((Test-DcbndkGrew -Check "RdmaStatistics B ($($adapterB.Name)).InitiatedConnections grew" -Before ($before.B) -After ($after.B) -Counter 'InitiatedConnections' -Why $noRdma))
        $null = $results.Add((Test-DcbndkGrew -Check "RdmaStatistics A ($($adapterA.Name)).AcceptedConnections grew" -Before ($before.A) -After ($after.A) -Counter 'AcceptedConnections' -Why $noRdma))
    }

    if ($null -eq $before.Perf -or $null -eq $after.Perf) {
        $null = $results.Add((New-DcbndkInfo -Check 'performance counters' -Actual "no 'RDMA Activity' or 'NetworkDirect Activity' counter set here: not compared"))
    }
    elseif (@($after.Perf.Instances).Count -eq 0) {
        $null = $results.Add((New-DcbndkCondition -Check 'performance counters: RDMA inbound bytes grew' -Holds $false `
                    -Expected 'instances for the dcbndk adapters' -Actual 'no instance name contains dcbndk' -Why 'the counter set lists other adapters only'))
    }
    else {
        $null = $results.Add((New-DcbndkCondition -Check "performance counters: RDMA inbound bytes grew ($(@($after.Perf.Instances) -join ', '))" `
                    -Holds ($after.Perf.Total -gt $before.Perf.Total) -Expected "more than $($before.Perf.Total)" -Actual "$($after.Perf.Total)" -Why $noRdma))
    }

    $failed = Write-DcbndkReport -Results $results.ToArray() -ReportPath $ReportPath
    if ($failed -gt 0) {
        exit 1
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
