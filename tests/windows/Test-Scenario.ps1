#Requires -Version 5.1
<#
.SYNOPSIS
Compares what Windows shows for the dcbndk adapter (Get-NetAdapterQos, Get-NetAdapterRdma,
Get-NetAdapterStatistics) with the [expect.*] tables of a scenario file.

.DESCRIPTION
    .\Test-Scenario.ps1 -Scenario scenarios\ets-smb-direct.toml

Steps (the script stops at the first one that fails and says which): read the scenario, find
the adapter, read the three cmdlets' views. Then every expectation is compared and reported as
PASS or FAIL with the expected and the actual value; the comparison is retried for up to
-TimeoutSeconds, because the DCB component applies a new configuration asynchronously.

- [expect.qos] enabled is compared with Get-NetAdapterQos .Enabled; every other key names a
  block of the formatted Get-NetAdapterQos view (operational_traffic_classes ->
  OperationalTrafficClasses) and lists its rows as printed, compared with blanks collapsed and
  '%' ignored (older Windows prints "40", newer "40%").
- [expect.rdma] keys name properties of Get-NetAdapterRdma (max_queue_pair_count ->
  MaxQueuePairCount); [expect.rdma_statistics] keys name counters of
  Get-NetAdapterStatistics .RdmaStatistics (active_connections -> ActiveConnections).

Exits 0 when every expectation holds, 1 otherwise.

.PARAMETER Scenario
The scenario file (TOML subset, see README.md).

.PARAMETER HardwareId
Overrides the scenario's [adapter] hardware_id.

.PARAMETER TimeoutSeconds
How long to wait for the adapter's view to match (default 30).

.PARAMETER ReportPath
Also write the results as JSON to this file.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory)] [string] $Scenario,
    [string] $HardwareId = '',
    [ValidateRange(0, 600)] [int] $TimeoutSeconds = 30,
    [string] $ReportPath = ''
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

function ConvertTo-DcbndkPascalCase {
    param([string] $Key)
    $words = $Key.Split('_') | Where-Object { $_ -ne '' } | ForEach-Object {
        $_.Substring(0, 1).ToUpperInvariant() + $_.Substring(1)
    }
    return ($words -join '')
}

function New-DcbndkResult {
    param([string] $Check, $Expected, $Actual)
    $want = ConvertTo-Json -InputObject $Expected -Compress
    $got = ConvertTo-Json -InputObject $Actual -Compress
    [pscustomobject]@{ Check = $Check; Passed = ($want -ceq $got); Expected = $want; Actual = $got }
}

function Get-DcbndkProperty {
    <# $Object.$Name, or a failed result's text when the object lacks it. #>
    param($Object, [string] $Name)
    if ($null -eq $Object) {
        return '<no object>'
    }
    if (@($Object.PSObject.Properties | ForEach-Object { $_.Name }) -notcontains $Name) {
        return "<no property $Name>"
    }
    return $Object.$Name
}

function Test-DcbndkExpectation {
    <# One result per expectation of $Expect against the adapter's current views. #>
    param([hashtable] $Expect, [string] $AdapterName)
    $results = New-Object System.Collections.ArrayList

    if ($Expect.ContainsKey('qos')) {
        $want = $Expect['qos']
        $qos = Get-NetAdapterQos -Name $AdapterName -ErrorAction SilentlyContinue
        $blocks = @{}
        if ($null -ne $qos) {
            $blocks = Get-DcbndkViewBlock -Text ($qos | Format-List | Out-String -Width 4096)
        }
        foreach ($key in $want.Keys) {
            if ($key -eq 'enabled') {
                $actual = Get-DcbndkProperty -Object $qos -Name 'Enabled'
                $null = $results.Add((New-DcbndkResult -Check 'qos.enabled' -Expected ([bool]$want[$key]) -Actual $actual))
                continue
            }
            $label = ConvertTo-DcbndkPascalCase -Key $key
            $expectedRows = @(@($want[$key]) | ForEach-Object { ConvertTo-DcbndkViewRow -Row ([string]$_) })
            $actualRows = @()
            if ($blocks.ContainsKey($label)) {
                $actualRows = @($blocks[$label] | ForEach-Object { ConvertTo-DcbndkViewRow -Row $_ })
            }
            $null = $results.Add((New-DcbndkResult -Check "qos.$key" -Expected $expectedRows -Actual $actualRows))
        }
    }

    if ($Expect.ContainsKey('rdma')) {
        $rdma = Get-NetAdapterRdma -Name $AdapterName -ErrorAction SilentlyContinue
        foreach ($key in $Expect['rdma'].Keys) {
            $actual = Get-DcbndkProperty -Object $rdma -Name (ConvertTo-DcbndkPascalCase -Key $key)
            $null = $results.Add((New-DcbndkResult -Check "rdma.$key" -Expected $Expect['rdma'][$key] -Actual $actual))
        }
    }

    if ($Expect.ContainsKey('rdma_statistics')) {
        $statistics = Get-NetAdapterStatistics -Name $AdapterName -ErrorAction SilentlyContinue
        $counters = Get-DcbndkProperty -Object $statistics -Name 'RdmaStatistics'
        if ($counters -is [string]) {
            $counters = $null
        }
        foreach ($key in $Expect['rdma_statistics'].Keys) {
            $actual = Get-DcbndkProperty -Object $counters -Name (ConvertTo-DcbndkPascalCase -Key $key)
            $null = $results.Add((New-DcbndkResult -Check "rdma_statistics.$key" -Expected $Expect['rdma_statistics'][$key] -Actual $actual))
        }
    }
    return , $results.ToArray()
}

try {
    $definition = Invoke-DcbndkStep "Read the scenario $Scenario" {
        $read = Read-DcbndkScenario -Path $Scenario
        if (-not $read.ContainsKey('expect')) {
            throw 'the scenario has no [expect.*] tables: nothing to compare'
        }
        $read
    }

    $adapter = Invoke-DcbndkStep 'Find the adapter' {
        Get-DcbndkAdapter -HardwareId (Get-DcbndkScenarioHardwareId -Scenario $definition -Override $HardwareId)
    }

    Invoke-DcbndkStep "Show the views of '$($adapter.Name)'" {
        Get-NetAdapterQos -Name $adapter.Name | Format-List | Out-String -Width 4096 | Write-Host
        Get-NetAdapterRdma -Name $adapter.Name | Format-List -Property * | Out-String -Width 4096 | Write-Host
        $statistics = Get-NetAdapterStatistics -Name $adapter.Name
        $statistics | Format-List | Out-String -Width 4096 | Write-Host
        if ($null -ne $statistics.RdmaStatistics) {
            $statistics.RdmaStatistics | Format-List | Out-String -Width 4096 | Write-Host
        }
    }

    $results = Invoke-DcbndkStep "Compare with [expect] (up to $TimeoutSeconds s)" {
        $deadline = (Get-Date).AddSeconds($TimeoutSeconds)
        while ($true) {
            $current = Test-DcbndkExpectation -Expect $definition['expect'] -AdapterName $adapter.Name
            $failing = @($current | Where-Object { -not $_.Passed })
            if ($failing.Count -eq 0 -or (Get-Date) -gt $deadline) {
                return , $current
            }
            Start-Sleep -Seconds 2
        }
    }

    $passed = 0
    $failed = 0
    foreach ($result in $results) {
        if ($result.Passed) {
            $passed++
            Write-Host "PASS $($result.Check) = $($result.Actual)" -ForegroundColor Green
        }
        else {
            $failed++
            Write-Host "FAIL $($result.Check): expected $($result.Expected), got $($result.Actual)" -ForegroundColor Red
        }
    }
    if ($ReportPath) {
        ConvertTo-Json -InputObject @($results) -Depth 4 | Set-Content -LiteralPath $ReportPath -Encoding UTF8
    }
    Write-Host "$passed passed, $failed failed"
    if ($failed -gt 0) {
        exit 1
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
