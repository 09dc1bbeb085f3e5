#Requires -Version 5.1
<#
.SYNOPSIS
Sets the dcbndk adapter's frame size, Microsoft's standardized *JumboPacket keyword, as
Validate-DCB's configurations (JumboPacket, check M15) and Test-NetStack's MTU stage expect of an
RDMA adapter: Set-NetAdapterAdvancedProperty -RegistryKeyword *JumboPacket -RegistryValue <n>.

.DESCRIPTION
The INF declares *JumboPacket ("Jumbo Packet", int 1514..9014, step 1, default 1514): the largest
Ethernet frame, header included, without FCS or 802.1Q tag. The driver reads it at initialize: the
MTU is the value - 14 (MtuSize, OID_GEN_MAXIMUM_FRAME_SIZE), its receive and transmit buffers are
sized for it, and its RoCEv2 path MTU is the largest IB MTU whose frame fits (1514: 1024; 9014:
4096; a connection takes the smaller of its two ends'). Set the same value on every adapter of
the test: a frame longer than a receiver's buffers is dropped there.

Steps (the script stops at the first one that fails and says which):
 1. checks it runs elevated;
 2. Set-NetAdapterAdvancedProperty -RegistryKeyword *JumboPacket -RegistryValue <JumboPacket> on
    the adapter of -HardwareId (Windows restarts the adapter, which reads the value again);
 3. waits until the adapter is back (Up or Disconnected, within -TimeoutSeconds), shows its
    *JumboPacket advanced property and fails if the RegistryValue is not -JumboPacket;
 4. shows Get-NetAdapter's MtuSize and fails if it is not -JumboPacket - 14, and shows the IP
    interfaces' NlMtu (TCP/IP takes the adapter's MTU unless an NlMtu was set by hand).

Nothing is recorded for Uninstall-Dcbndk.ps1: the value lives in the adapter's own registry key,
which goes with the device when Uninstall-Dcbndk.ps1 removes it. Set -JumboPacket 1514 to go back
to standard frames.

.PARAMETER JumboPacket
The frame size, 1514..9014. 9014 is Validate-DCB's NDKm2 example and the smb-direct scenario's.

.PARAMETER HardwareId
Which dcbndk adapter: root\dcbndk (default) or root\dcbndk_b.

.PARAMETER TimeoutSeconds
How long to wait for the adapter to come back after its restart.
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)] [ValidateRange(1514, 9014)] [int] $JumboPacket,
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

    Invoke-DcbndkStep "Set *JumboPacket $JumboPacket on '$adapterName' and check it after the adapter's restart" {
        Set-DcbndkKeyword -Name $adapterName -Keyword '*JumboPacket' -Value ([string]$JumboPacket) -TimeoutSeconds $TimeoutSeconds
    }

    Invoke-DcbndkStep "Check the MTU the driver reports (Get-NetAdapter MtuSize)" {
        $mtu = [int](Get-NetAdapter -Name $adapterName -IncludeHidden).MtuSize
        Write-Host "    MtuSize $mtu"
        if ($mtu -ne $JumboPacket - 14) {
            throw "MtuSize is $mtu, expected $($JumboPacket - 14) (*JumboPacket - 14)"
        }
        Get-NetIPInterface -InterfaceAlias $adapterName -ErrorAction SilentlyContinue |
            Format-Table -AutoSize InterfaceAlias, AddressFamily, NlMtu | Out-String -Width 4096 | Write-Host
    }
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
