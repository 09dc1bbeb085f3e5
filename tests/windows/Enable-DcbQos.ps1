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
    Server, Enable-WindowsOptionalFeature DataCenterBridging on a client edition; if Windows
    asks for a restart, the script says so and stops (run it again after the restart);
 3. Enable-NetAdapterQos on the adapter of -HardwareId (this sets *QOS = 1 and restarts it);
 4. shows Get-NetAdapterQos and fails if QoS is not enabled.

A feature installed here is recorded in %ProgramData%\dcbndk\state.json, and
Uninstall-Dcbndk.ps1 removes it again.

.PARAMETER HardwareId
Which dcbndk adapter: root\dcbndk (default) or root\dcbndk_b.
#>
[CmdletBinding()]
param(
    [ValidateSet('root\dcbndk', 'root\dcbndk_b')] [string] $HardwareId = 'root\dcbndk'
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

try {
    Invoke-DcbndkStep 'Check prerequisites (elevation)' {
        Assert-DcbndkAdministrator
    }

    Invoke-DcbndkStep 'Install the Data Center Bridging feature when absent' {
        if (Get-Command -Name 'Get-WindowsFeature' -ErrorAction SilentlyContinue) {
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

    Invoke-DcbndkStep "Enable NDIS QoS on '$($adapter.Name)' (Enable-NetAdapterQos)" {
        Enable-NetAdapterQos -Name $adapter.Name
        $qos = Get-NetAdapterQos -Name $adapter.Name
        if ($null -eq $qos) {
            throw "Get-NetAdapterQos shows nothing for '$($adapter.Name)': the adapter registered no QoS capabilities"
        }
        $qos | Format-List | Out-String -Width 4096 | Write-Host
        if (-not $qos.Enabled) {
            throw "Get-NetAdapterQos shows '$($adapter.Name)' with QoS disabled after Enable-NetAdapterQos"
        }
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
