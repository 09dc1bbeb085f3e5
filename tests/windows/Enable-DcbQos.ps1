#Requires -Version 5.1
<#
.SYNOPSIS
Makes the Windows DCB component (msdcb.sys) drive the dcbndk adapter: installs the Data Center
Bridging feature when absent and enables NDIS QoS on the adapter (Enable-NetAdapterQos).

.DESCRIPTION
Apply-Scenario.ps1 runs this first; run it alone to look at the adapter's QoS without a scenario.

Steps (the script stops at the first one that fails and says which):
 1. checks it runs elevated;
 2. installs the feature when absent: Install-WindowsFeature Data-Center-Bridging on Windows
    Server (Win32_OperatingSystem ProductType 2 or 3), Enable-WindowsOptionalFeature
    DataCenterBridging on a client edition (ProductType 1); if Windows asks for a restart, the
    script says so and stops (run it again after the restart);
 3. Enable-NetAdapterQos -NoRestart on the adapter of -HardwareId (this sets *QOS = 1), then
    Restart-NetAdapter (the driver reads *QOS at initialize);
 4. waits up to -TimeoutSeconds for Get-NetAdapterQos to show QoS enabled, shows it, and fails
    if it shows nothing (no QoS capabilities) or QoS disabled.

A feature installed here is recorded in %ProgramData%\dcbndk\state.json, and
Uninstall-Dcbndk.ps1 removes it again.

.PARAMETER HardwareId
Which dcbndk adapter: root\dcbndk (default) or root\dcbndk_b.

.PARAMETER TimeoutSeconds
How long to wait for the adapter's QoS view after Enable-NetAdapterQos restarts it (default 30).
#>
[CmdletBinding()]
param(
    [ValidateSet('root\dcbndk', 'root\dcbndk_b')] [string] $HardwareId = 'root\dcbndk',
    [ValidateRange(1, 600)] [int] $TimeoutSeconds = 30
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

try {
    Invoke-DcbndkStep 'Check prerequisites (elevation)' {
        Assert-DcbndkAdministrator
    }

    Invoke-DcbndkStep 'Install the Data Center Bridging feature when absent' {
        # A server edition by Win32_OperatingSystem.ProductType (1 work station, 2 domain
        # controller, 3 server; learn.microsoft.com/windows/win32/cimwin32prov/win32-operatingsystem),
        # not by Get-WindowsFeature being there: a client with RSAT has that cmdlet too, and it
        # refuses to run there. Server: Install-WindowsFeature (ServerManager module); client:
        # Enable-WindowsOptionalFeature (Dism module).
        $productType = [int](Get-CimInstance -ClassName 'Win32_OperatingSystem').ProductType
        if ($productType -ne 1) {
            $feature = Get-WindowsFeature -Name 'Data-Center-Bridging'
            if ($feature.Installed) {
                Write-Host '    Data-Center-Bridging is already installed'
                return
            }
            $result = Install-WindowsFeature -Name 'Data-Center-Bridging'
            if (-not $result.Success) {
                throw "Install-WindowsFeature Data-Center-Bridging failed (exit code $($result.ExitCode))"
            }
            Set-DcbndkStateValue -Name 'dcb_feature' -Value 'server'
            if ([string]$result.RestartNeeded -eq 'Yes') {
                throw 'Data-Center-Bridging was installed and Windows needs a restart: restart, then run this script again.'
            }
        }
        else {
            $feature = Get-WindowsOptionalFeature -Online -FeatureName 'DataCenterBridging'
            if ([string]$feature.State -eq 'Enabled') {
                Write-Host '    DataCenterBridging is already enabled'
                return
            }
            $result = Enable-WindowsOptionalFeature -Online -FeatureName 'DataCenterBridging' -NoRestart
            Set-DcbndkStateValue -Name 'dcb_feature' -Value 'client'
            if ($result.RestartNeeded) {
                throw 'DataCenterBridging was enabled and Windows needs a restart: restart, then run this script again.'
            }
        }
        Write-Host '    Installed'
    }

    $adapter = Invoke-DcbndkStep "Find the adapter of $HardwareId" {
        Get-DcbndkAdapter -HardwareId $HardwareId
    }

    $adapterName = $adapter.Name
    Invoke-DcbndkStep "Enable NDIS QoS on '$adapterName' (Enable-NetAdapterQos)" {
        # Enable-NetAdapterQos sets *QOS = 1 and restarts the adapter unless -NoRestart
        # (learn.microsoft.com/powershell/module/netadapter/enable-netadapterqos); nothing says
        # that restart has begun when it returns. So -NoRestart and Restart-NetAdapter, which
        # returns once the adapter has been disabled and enabled again (Set-DcbndkKeyword,
        # DcbndkCommon.ps1), and then a poll: the driver registers its QoS capabilities during
        # its initialize, and msdcb applies the configuration after that.
        Enable-NetAdapterQos -Name $adapterName -NoRestart
        Restart-NetAdapter -Name $adapterName -IncludeHidden -Confirm:$false
        # "If a network adapter does not support QoS ... this cmdlet does not return any
        # information" (learn.microsoft.com/powershell/module/netadapter/get-netadapterqos), and
        # where the provider finds no QoS data it writes a CIM error instead, which 'Stop' would
        # make terminating: it is read with SilentlyContinue, its error kept for the message.
        $deadline = (Get-Date).AddSeconds($TimeoutSeconds)
        $qos = $null
        $qosErrors = @()
        while ($true) {
            $qosErrors = @()
            $qos = Get-NetAdapterQos -Name $adapterName -ErrorAction SilentlyContinue -ErrorVariable qosErrors
            if (($null -ne $qos -and $qos.Enabled) -or (Get-Date) -gt $deadline) {
                break
            }
            Start-Sleep -Seconds 1
        }
        if ($null -eq $qos) {
            $why = ''
            if (@($qosErrors).Count -gt 0) {
                $why = " ($(@($qosErrors)[0]))"
            }
            throw "Get-NetAdapterQos shows nothing for '$adapterName' after $TimeoutSeconds s${why}: the adapter registered no QoS capabilities"
        }
        $qos | Format-List | Out-String -Width 4096 | Write-Host
        if (-not $qos.Enabled) {
            throw "Get-NetAdapterQos shows '$adapterName' with QoS disabled $TimeoutSeconds s after Enable-NetAdapterQos"
        }
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
