#Requires -Version 5.1
<#
.SYNOPSIS
Gives the dcbndk adapter a VLAN ID, as Validate-DCB's mode-1 configuration expects of an RDMA
adapter (RDMAEnabledAdapters VLANID, check M13): Set-NetAdapterAdvancedProperty -RegistryKeyword
VlanID -RegistryValue <id>.

.DESCRIPTION
The INF declares the keyword VlanID ("VLAN ID", int 0..4094, default 0: no VLAN). The driver reads
it at initialize as OID_GEN_VLAN_ID's registry value: with *PriorityVLANTag 2 or 3 it tags the
frames it sends (RoCEv2 included) with the VLAN ID and drops received frames of another VLAN
(counted as receive discards); untagged and priority-tagged frames are still taken.

Steps (the script stops at the first one that fails and says which):
 1. checks it runs elevated;
 2. Set-NetAdapterAdvancedProperty -RegistryKeyword VlanID -RegistryValue <VlanId> on the adapter
    of -HardwareId (Windows restarts the adapter, which reads the value again);
 3. waits until the adapter is back (Up or Disconnected, within -TimeoutSeconds), shows its
    VlanID advanced property (RegistryKeyword, DisplayName, RegistryValue) and fails if the
    RegistryValue is not -VlanId;
 4. shows *PriorityVLANTag and warns when it is 0 or 1: the VLAN ID is then neither tagged nor
    filtered.

Nothing is recorded for Uninstall-Dcbndk.ps1: the value lives in the adapter's own registry key,
which goes with the device when Uninstall-Dcbndk.ps1 removes it. Set -VlanId 0 to go back to no
VLAN.

.PARAMETER VlanId
The VLAN ID, 0..4094 (4095 is reserved by 802.1Q). 101 is Validate-DCB's NDKm1 example and the
smb-direct scenario's.

.PARAMETER HardwareId
Which dcbndk adapter: root\dcbndk (default) or root\dcbndk_b.

.PARAMETER TimeoutSeconds
How long to wait for the adapter to come back after its restart.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)] [ValidateRange(0, 4094)] [int] $VlanId,
    [ValidateSet('root\dcbndk', 'root\dcbndk_b')] [string] $HardwareId = 'root\dcbndk',
    [int] $TimeoutSeconds = 30
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')

try {
    Invoke-DcbndkStep 'Check prerequisites (elevation)' {
        Assert-DcbndkAdministrator
    }

    $adapter = Invoke-DcbndkStep "Find the adapter of $HardwareId" {
        Get-DcbndkAdapter -HardwareId $HardwareId
    }
    # Not $name: inside a step's script block that is Invoke-DcbndkStep's own -Name (the block
    # runs in a child scope of the function, and PowerShell names ignore case).
    $adapterName = $adapter.Name

    Invoke-DcbndkStep "Set VlanID $VlanId on '$adapterName' and check it after the adapter's restart" {
        Set-DcbndkKeyword -Name $adapterName -Keyword 'VlanID' -Value ([string]$VlanId) -TimeoutSeconds $TimeoutSeconds
    }

    Invoke-DcbndkStep "Check that VLAN tagging is on (*PriorityVLANTag 2 or 3)" {
        $tag = @(Get-NetAdapterAdvancedProperty -Name $adapterName -AllProperties -ErrorAction SilentlyContinue |
                Where-Object { $_.RegistryKeyword -eq '*PriorityVLANTag' })
        if ($tag.Count -ne 1) {
            throw "Get-NetAdapterAdvancedProperty shows no *PriorityVLANTag row for '$adapterName'"
        }
        $value = [string](@($tag[0].RegistryValue)[0])
        Write-Host "    *PriorityVLANTag $value ($($tag[0].DisplayValue))"
        if ($VlanId -ne 0 -and ($value -eq '0' -or $value -eq '1')) {
            Write-Warning "*PriorityVLANTag is $value, so VLAN tagging is off and the VLAN ID is neither tagged nor filtered"
        }
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
