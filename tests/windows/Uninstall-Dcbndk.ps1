#Requires -Version 5.1
<#
.SYNOPSIS
Removes everything the dcbndk scripts added and leaves the VM as it was found.

.DESCRIPTION
    .\Uninstall-Dcbndk.ps1

Steps (the script stops at the first one that fails and says which; run it again after fixing
the cause, it skips what is already gone):
 1. checks it runs elevated;
 2. removes the traffic classes and QoS policies Apply-Scenario.ps1 created and restores the
    flow-control and DCBX willing settings recorded before the first scenario;
 3. removes the SMB mapping, multichannel constraint and share (with its folder)
    Test-SmbDirect.ps1 created; the mapping belongs to the logon session that made it, so run
    this from the same elevated session (after a logoff it is gone anyway);
 4. restores the firewall rules Test-NetStack -EnableFirewallRules changed
    (Invoke-TestNetStack.ps1), and uninstalls the PowerShell Gallery modules and deletes the
    NuGet package provider folders the scripts installed;
 5. removes the IPv4 addresses the RDMA scripts gave the adapters and turns DHCP back on where
    it was on;
 6. removes the dcbndk devices (devgen /remove, or pnputil /remove-device without devgen);
 7. deletes the driver package (pnputil /delete-driver oemNN.inf /uninstall /force);
 8. removes the Data Center Bridging feature if Enable-DcbQos.ps1 installed it (unless
    -KeepDcbFeature);
 9. removes the test certificate from the stores Install-Dcbndk.ps1 imported it into;
10. deletes %ProgramData%\dcbndk.

The results folders Invoke-TestNetStack.ps1 writes (-ResultDir) are output, not machine
state: they stay.

Test signing stays as it is: the scripts never changed it. Turn it off with
"bcdedit /set testsigning off" and a reboot if it was turned on for dcbndk.

.PARAMETER DevGenPath
devgen.exe, to remove the devices it created. Default: PATH, then the installed Windows Kits.

.PARAMETER KeepDcbFeature
Keep the Data Center Bridging feature even if these scripts installed it.
#>
[CmdletBinding()]
param(
    [string] $DevGenPath,
    [switch] $KeepDcbFeature
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'DcbndkCommon.ps1')
. (Join-Path $PSScriptRoot 'DcbndkRdmaCommon.ps1')

try {
    Invoke-DcbndkStep 'Check prerequisites (elevation)' {
        Assert-DcbndkAdministrator
    }

    Invoke-DcbndkStep 'Remove the scenario QoS settings and restore the recorded ones' {
        Undo-DcbndkQos
    }

    Invoke-DcbndkStep 'Remove the SMB mapping, multichannel constraint and share of Test-SmbDirect.ps1' {
        Undo-DcbndkSmb
    }

    Invoke-DcbndkStep 'Restore the firewall rules, remove the modules and package provider the scripts installed' {
        Undo-DcbndkFirewallRule
        Undo-DcbndkGalleryModule
    }

    Invoke-DcbndkStep 'Remove the IPv4 addresses given to the adapters' {
        Undo-DcbndkAdapterAddress
    }

    Invoke-DcbndkStep 'Remove the dcbndk devices' {
        $state = Read-DcbndkState
        $recorded = Get-DcbndkStateList -State $state -Name 'devices'
        $present = @(Get-DcbndkDevice | ForEach-Object { $_.InstanceId })
        $devices = @(@($recorded) + @($present) | Sort-Object -Unique)
        $devgen = Find-DcbndkDevGen -DevGenPath $DevGenPath
        foreach ($instanceId in $devices) {
            if (-not (Get-PnpDevice -InstanceId $instanceId -ErrorAction SilentlyContinue)) {
                Write-Host "    $instanceId is already gone"
                continue
            }
            if ($devgen -and $recorded -contains $instanceId) {
                $result = Invoke-DcbndkNative -FilePath $devgen -ArgumentList @('/remove', $instanceId)
            }
            else {
                $result = Invoke-DcbndkNative -FilePath 'pnputil.exe' -ArgumentList @('/remove-device', $instanceId) -SuccessCode @(0, 3010)
            }
            Write-Host $result.Output
            if (Get-PnpDevice -InstanceId $instanceId -ErrorAction SilentlyContinue) {
                throw "$instanceId is still present after removal"
            }
        }
        $state = Read-DcbndkState
        $state.Remove('devices')
        Write-DcbndkState -State $state
    }

    Invoke-DcbndkStep 'Delete the driver package (pnputil /delete-driver /uninstall /force)' {
        $state = Read-DcbndkState
        $recorded = Get-DcbndkStateList -State $state -Name 'driver_packages'
        $inStore = @(Get-WindowsDriver -Online | Where-Object {
                (Split-Path -Leaf $_.OriginalFileName) -eq 'dcbndk.inf'
            } | ForEach-Object { $_.Driver })
        foreach ($published in @(@($recorded) + @($inStore) | Sort-Object -Unique)) {
            if ($inStore -notcontains $published) {
                Write-Host "    $published is already gone"
                continue
            }
            $result = Invoke-DcbndkNative -FilePath 'pnputil.exe' -ArgumentList @('/delete-driver', $published, '/uninstall', '/force') -SuccessCode @(0, 3010)
            Write-Host $result.Output
        }
        $state = Read-DcbndkState
        $state.Remove('driver_packages')
        Write-DcbndkState -State $state
    }

    Invoke-DcbndkStep 'Remove the Data Center Bridging feature if these scripts installed it' {
        $state = Read-DcbndkState
        $feature = ''
        if ($state.ContainsKey('dcb_feature') -and $null -ne $state['dcb_feature']) {
            $feature = [string]$state['dcb_feature']
        }
        if ($feature -eq '') {
            Write-Host '    Not installed by these scripts: left as it is'
            return
        }
        if ($KeepDcbFeature) {
            Write-Host '    Kept (-KeepDcbFeature)'
            return
        }
        $restart = $false
        if ($feature -eq 'server') {
            $result = Uninstall-WindowsFeature -Name 'Data-Center-Bridging'
            if (-not $result.Success) {
                throw "Uninstall-WindowsFeature Data-Center-Bridging failed (exit code $($result.ExitCode))"
            }
            $restart = ([string]$result.RestartNeeded -eq 'Yes')
        }
        else {
            $result = Disable-WindowsOptionalFeature -Online -FeatureName 'DataCenterBridging' -NoRestart
            $restart = [bool]$result.RestartNeeded
        }
        $state.Remove('dcb_feature')
        Write-DcbndkState -State $state
        if ($restart) {
            Write-Host '    Removed; Windows completes it at the next restart' -ForegroundColor Yellow
        }
    }

    Invoke-DcbndkStep 'Remove the test certificate from the stores it was imported into' {
        $state = Read-DcbndkState
        $certificates = Get-DcbndkStateList -State $state -Name 'certificates'
        foreach ($certificate in $certificates) {
            $path = "Cert:\LocalMachine\$($certificate.Store)\$($certificate.Thumbprint)"
            if (Test-Path -LiteralPath $path) {
                Remove-Item -LiteralPath $path
                Write-Host "    Removed $path"
            }
        }
        $state.Remove('certificates')
        Write-DcbndkState -State $state
    }

    Invoke-DcbndkStep "Delete $script:DcbndkStateDir" {
        if (Test-Path -LiteralPath $script:DcbndkStateDir) {
            Remove-Item -LiteralPath $script:DcbndkStateDir -Recurse
        }
    }

    Write-Host 'dcbndk is uninstalled. Test signing is unchanged ("bcdedit /set testsigning off" + reboot to turn it off).'
}
catch {
    Write-Host "FAILED: $($_.Exception.Message)" -ForegroundColor Red
    exit 1
}
