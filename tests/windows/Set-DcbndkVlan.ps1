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
    $name = $adapter.Name

    Invoke-DcbndkStep "Set VlanID $VlanId on '$name' (Set-NetAdapterAdvancedProperty)" {
        Set-NetAdapterAdvancedProperty -Name $name -RegistryKeyword 'VlanID' -RegistryValue ([string]$VlanId)
    }

    Invoke-DcbndkStep "Check the VlanID advanced property of '$name'" {
        $deadline = (Get-Date).AddSeconds($TimeoutSeconds)
        do {
            $state = [string](Get-NetAdapter -Name $name -IncludeHidden).Status
            if ($state -eq 'Up' -or $state -eq 'Disconnected') {
                break
            }
            Start-Sleep -Milliseconds 500
        } while ((Get-Date) -lt $deadline)
        if ($state -ne 'Up' -and $state -ne 'Disconnected') {
            throw "'$name' is $state after $TimeoutSeconds s: the adapter did not come back after its restart"
        }
        # -AllProperties and an exact match: -RegistryKeyword takes wildcards.
        $property = @(Get-NetAdapterAdvancedProperty -Name $name -AllProperties -ErrorAction SilentlyContinue |
                Where-Object { $_.RegistryKeyword -eq 'VlanID' })
        if ($property.Count -ne 1) {
            throw "Get-NetAdapterAdvancedProperty shows $($property.Count) VlanID rows for '$name', expected 1 (is the INF the current one?)"
        }
        $property[0] | Format-Table -AutoSize RegistryKeyword, DisplayName, RegistryValue | Out-String -Width 4096 | Write-Host
        $value = [string](@($property[0].RegistryValue)[0])
        if ($value -ne [string]$VlanId) {
            throw "VlanID RegistryValue is '$value', expected '$VlanId'"
        }
    }

    Invoke-DcbndkStep "Check that VLAN tagging is on (*PriorityVLANTag 2 or 3)" {
        $tag = @(Get-NetAdapterAdvancedProperty -Name $name -AllProperties -ErrorAction SilentlyContinue |
                Where-Object { $_.RegistryKeyword -eq '*PriorityVLANTag' })
        if ($tag.Count -ne 1) {
            throw "Get-NetAdapterAdvancedProperty shows no *PriorityVLANTag row for '$name'"
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
